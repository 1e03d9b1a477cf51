#include "cli/run_output.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "core/terminal_text.h"

namespace topolaunch::cli {

void PrefixPrinter::Line(size_t node, OutputStream stream, std::string_view text) {
  int i = stream == OutputStream::kStdout ? 0 : 1;
  if (broken_[i]) {
    ++lost_[i];
    return;
  }
  std::FILE* out = i == 0 ? stdout : stderr;
  errno = 0;
  if (PrintTo(out, fmt::format("{}[{}]: {}\n", nodes_[node].host, nodes_[node].node_rank, TerminalSafe(text)))) return;
  broken_[i] = true;
  ++lost_[i];
  std::clearerr(out);
  if (i == 0)
    Note(fmt::format("cannot write to stdout ({}): the nodes' stdout lines are dropped from here on; the job goes on",
                     errno ? std::strerror(errno) : "write error"));
}

Result<std::unique_ptr<LogDirPrinter>> LogDirPrinter::Open(const std::string& dir, const std::vector<SessionNode>& nodes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kUnavailable, "--log-dir " + dir, ec.message());
  std::unique_ptr<LogDirPrinter> printer(new LogDirPrinter());
  for (const SessionNode& node : nodes) {
    std::string file = fmt::format("{}/{}.log", dir, node.host);
    std::FILE* f = std::fopen(file.c_str(), "we");
    if (!f) return Error(ErrorCode::kUnavailable, file, std::strerror(errno));
    printer->files_.push_back({file, f, false});
  }
  return printer;
}

LogDirPrinter::~LogDirPrinter() {
  for (File& file : files_)
    if (std::fclose(file.stream) != 0 && !file.broken)
      Note(fmt::format("{}: {}: its last lines may be lost", file.path, std::strerror(errno)));
}

void LogDirPrinter::Line(size_t node, OutputStream, std::string_view text) {
  File& file = files_[node];
  if (file.broken) {
    ++lost_;
    return;
  }
  errno = 0;
  std::string line(text);
  line += '\n';
  if (PrintTo(file.stream, line)) return;
  file.broken = true;
  ++lost_;
  Note(fmt::format("cannot write to {} ({}): this node's lines are dropped from here on; the job goes on", file.path,
                   errno ? std::strerror(errno) : "write error"));
}

}  // namespace topolaunch::cli
