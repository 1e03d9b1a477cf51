#include "cli/cli_output.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "launch/command.h"

namespace topolaunch::cli {

std::string ShellWord(std::string_view word) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._/-+=:,@%").find(c) != std::string_view::npos;
  };
  bool as_is = !word.empty() && std::all_of(word.begin(), word.end(), plain);
  return as_is ? std::string(word) : ShellQuote(word);
}

bool PrintTo(std::FILE* stream, std::string_view text) {
  bool ok = std::fwrite(text.data(), 1, text.size(), stream) == text.size();
  return std::fflush(stream) == 0 && ok;
}

int ReportError(const Error& error) {
  for (const Problem& p : error.problems) {
    if (p.where.empty()) PrintTo(stderr, fmt::format("topolaunch: error: {}\n", p.what));
    else PrintTo(stderr, fmt::format("topolaunch: error: {}: {}\n", p.where, p.what));
  }
  return ExitStatusFor(error.code);
}

void ExitAfterTimeout(const Error& error) {
  int status = ReportError(error);
  std::fflush(nullptr);
  std::_Exit(status);
}

void Note(std::string_view text) { PrintTo(stderr, fmt::format("topolaunch: note: {}\n", text)); }

int WriteOutput(const std::string& output_path, std::string_view data) {
  if (output_path.empty() || output_path == "-") {
    if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size() || std::fflush(stdout) != 0)
      return ReportError(Error(ErrorCode::kUnavailable, "stdout", "write failed"));
    return 0;
  }
  Status written = WriteFileAtomically(output_path, data);
  return written.ok() ? 0 : ReportError(written.error());
}

std::string NowRfc3339() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string VersionString() { return std::string("topolaunch ") + TOPOLAUNCH_VERSION; }

}  // namespace topolaunch::cli
