// Where tests find their real-world data and the topolaunch binary.
#pragma once

#include <string>

namespace topolaunch::testing {

/// The test data folder in this source tree (`tests/data`: real hwloc XML,
/// ibnetdiscover dumps and NCCL's variable names, each folder with its
/// SOURCES). Always there: a test whose file is missing fails, never skips.
std::string TestDataDir();

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
