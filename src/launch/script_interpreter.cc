#include "launch/script_interpreter.h"

#include <vector>

#include <fmt/format.h>

#include "core/text_io.h"

namespace topolaunch {
namespace {

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsShell(std::string_view program) {
  std::string_view name = BaseName(program);
  return name == "sh" || name == "bash" || name == "dash";
}

// pip writes `'''exec' "/path/python" "$0" "$@"` on the second line when
// the interpreter's path is too long for `#!`.
std::string PipLauncherPath(std::string_view rest) {
  constexpr std::string_view kExec = "'''exec' \"";
  size_t at = rest.find(kExec);
  if (at == std::string_view::npos) return "";
  size_t start = at + kExec.size();
  size_t end = rest.find('"', start);
  if (end == std::string_view::npos) return "";
  return std::string(rest.substr(start, end - start));
}

}  // namespace

Result<std::string> InterpreterOf(std::string_view path, std::string_view head,
                                  const std::function<std::string(const std::string&)>& find) {
  auto cannot = [&](std::string_view why) {
    return Error(ErrorCode::kUnavailable, std::string(path), fmt::format("cannot tell which Python it runs: {}", why));
  };
  if (head.starts_with("\x7f" "ELF")) {
    if (BaseName(path).starts_with("python")) return std::string(path);
    return cannot("a binary program, not a Python script");
  }
  if (!head.starts_with("#!")) return cannot("no #! line");
  size_t newline = head.find('\n');
  if (newline == std::string_view::npos) return cannot("its #! line does not end within the first bytes");
  std::string_view line = head.substr(2, newline - 2);
  if (line.ends_with('\r')) line.remove_suffix(1);
  std::vector<std::string_view> words = BlankSeparatedWords(line);
  if (words.empty()) return cannot("an empty #! line");
  std::string_view program = words[0];
  if (BaseName(program) == "env") {
    size_t i = 1;
    while (i < words.size() && words[i].starts_with('-')) ++i;  // -S, -i, ...
    while (i < words.size() && words[i].find('=') != std::string_view::npos) ++i;  // NAME=VALUE
    if (i == words.size()) return cannot(fmt::format("#!{} names no program", line));
    std::string found = find(std::string(words[i]));
    if (found.empty()) return cannot(fmt::format("#!{}: {} not found in PATH", line, words[i]));
    return found;
  }
  if (IsShell(program)) {
    std::string launcher = PipLauncherPath(head.substr(newline + 1));
    if (!launcher.empty()) return launcher;
    return cannot(fmt::format("a shell script (#!{}), not a Python launcher", line));
  }
  return std::string(program);
}

}  // namespace topolaunch
