// Where tests find the shared real-world data and the topolaunch binary.
#pragma once

#include <optional>
#include <string>

namespace topolaunch::testing {

/// The shared data folder (`../shared/data` beside the source tree, or
/// $TOPOLAUNCH_SHARED_DATA), or nullopt when absent: tests then GTEST_SKIP.
std::optional<std::string> SharedDataDir();

/// Path of the built topolaunch binary.
std::string TopolaunchBinary();

/// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace topolaunch::testing
