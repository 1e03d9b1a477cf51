#include "launch/command.h"

#include <fmt/format.h>

#include "topolaunch/topology.h"

namespace topolaunch {

bool IsValidEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> RenderShellCommand(const Command& command) {
  std::vector<Problem> problems;
  if (command.argv.empty()) problems.push_back({"argv", "the command is empty"});
  for (size_t i = 0; i < command.argv.size(); ++i)
    if (command.argv[i].find('\0') != std::string::npos)
      problems.push_back({fmt::format("argv[{}]", i), "holds a NUL byte, which no command line can carry"});
  for (const auto& [name, value] : command.env) {
    if (!IsValidEnvName(name))
      problems.push_back({fmt::format("env \"{}\"", name), "not a variable name (expected [A-Za-z_][A-Za-z0-9_]*)"});
    if (value.find('\0') != std::string::npos)
      problems.push_back({fmt::format("env {}", name), "the value holds a NUL byte"});
  }
  for (const std::string& name : command.unset)
    if (!IsValidEnvName(name))
      problems.push_back({fmt::format("unset \"{}\"", name), "not a variable name (expected [A-Za-z_][A-Za-z0-9_]*)"});
  if (command.cwd.find('\0') != std::string::npos) problems.push_back({"cwd", "holds a NUL byte"});
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  std::string line;
  if (!command.cwd.empty()) line += "cd " + ShellQuote(command.cwd) + " && ";
  for (const std::string& name : command.unset) line += "unset " + ShellQuote(name) + " && ";
  for (const auto& [name, value] : command.env) line += "export " + ShellQuote(name + "=" + value) + " && ";
  line += "exec " + ShellJoin(command.argv);
  return line;
}

namespace {

bool IsIpv4Address(std::string_view text) {
  int parts = 0;
  size_t i = 0;
  while (i <= text.size()) {
    size_t end = text.find('.', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(i, end - i);
    if (part.empty() || part.size() > 3) return false;
    int value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
    ++parts;
    i = end + 1;
  }
  return parts == 4;
}

}  // namespace

Status CheckRemoteHost(std::string_view host) {
  if (host.empty()) return Error(ErrorCode::kBadInput, "host \"\"", "empty host name");
  if (host.front() == '-')
    return Error(ErrorCode::kBadInput, fmt::format("host \"{}\"", host),
                 "starts with '-': not a host name (it would read as an option)");
  if (IsIpv4Address(host) || IsValidHostName(host)) return Ok{};
  return Error(ErrorCode::kBadInput, fmt::format("host \"{}\"", host),
               "not a host name (expected letters, digits, '-', '_' and '.') or an IPv4 address");
}

}  // namespace topolaunch
