#include "support/test_paths.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace topolaunch::testing {

std::string TestDataDir() { return TOPOLAUNCH_SOURCE_DIR "/tests/data"; }

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
