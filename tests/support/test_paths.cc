#include "support/test_paths.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace topolaunch::testing {

std::optional<std::string> SharedDataDir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("TOPOLAUNCH_SHARED_DATA"); env && *env && fs::is_directory(env))
    return std::string(env);
  fs::path beside = fs::path(TOPOLAUNCH_SOURCE_DIR).parent_path() / "shared" / "data";
  if (fs::is_directory(beside)) return beside.string();
  return std::nullopt;
}

std::string TopolaunchBinary() { return TOPOLAUNCH_BINARY; }

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "topolaunch-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace topolaunch::testing
