#include "cli/cli_output.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "core/atomic_file.h"

namespace topolaunch::cli {

void ExitAfterTimeout(const Error& error) {
  int status = ReportError(error);
  std::fflush(nullptr);
  std::_Exit(status);
}

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

std::string DefaultTemplatesDir() {
  std::error_code ec;
  return std::filesystem::is_directory(TOPOLAUNCH_TEMPLATES_DIR, ec) ? TOPOLAUNCH_TEMPLATES_DIR : "";
}

std::string VersionString() { return std::string("topolaunch ") + TOPOLAUNCH_VERSION; }

}  // namespace topolaunch::cli
