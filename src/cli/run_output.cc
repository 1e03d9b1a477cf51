#include "cli/run_output.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace topolaunch::cli {

void PrefixPrinter::Line(size_t node, OutputStream stream, std::string_view text) {
  std::FILE* out = stream == OutputStream::kStdout ? stdout : stderr;
  fmt::print(out, "{}[{}]: {}\n", nodes_[node].host, nodes_[node].node_rank, text);
  std::fflush(out);
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
    std::setvbuf(f, nullptr, _IOLBF, 0);
    printer->files_.push_back(f);
  }
  return printer;
}

LogDirPrinter::~LogDirPrinter() {
  for (std::FILE* f : files_) std::fclose(f);
}

void LogDirPrinter::Line(size_t node, OutputStream, std::string_view text) {
  fmt::print(files_[node], "{}\n", text);
}

}  // namespace topolaunch::cli
