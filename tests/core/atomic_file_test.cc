// AtomicFileStream and WriteFileAtomically on a real file system: the path
// holds the old file or the whole new one, never a part, and no temporary
// file is left behind either way.
#include "core/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

using testing::ReadFile;
using testing::TempDir;

void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

int FilesIn(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFileStream, ThePathHoldsTheOldFileUntilCommitThenTheWholeNewOne) {
  TempDir dir;
  std::string path = dir.File("topology.json");
  Spit(path, "old");
  auto stream = AtomicFileStream::Open(path);
  ASSERT_TRUE(stream.ok()) << stream.error().Message();
  std::string expected;
  for (int i = 0; i < 200; ++i) {
    std::string piece(1000 + i, static_cast<char>('a' + i % 26));
    expected += piece;
    (*stream)->Append(std::move(piece));
  }
  EXPECT_EQ(ReadFile(path), "old");
  ASSERT_TRUE((*stream)->Commit().ok());
  EXPECT_EQ(ReadFile(path), expected);
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  EXPECT_EQ(FilesIn(dir.path()), 1);
  EXPECT_FALSE((*stream)->Commit().ok());  // once only
}

TEST(AtomicFileStream, DroppedWithoutCommitLeavesThePathAndNoTemporaryFile) {
  TempDir dir;
  std::string path = dir.File("out.json");
  Spit(path, "old");
  {
    auto stream = AtomicFileStream::Open(path);
    ASSERT_TRUE(stream.ok());
    (*stream)->Append(std::string(100000, 'x'));
  }
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(FilesIn(dir.path()), 1);
}

TEST(AtomicFileStream, AWriteThatFailsIsReportedByCommitNamingThePath) {
  TempDir dir;
  std::string path = dir.File("out.json");
  Spit(path, "old");
  // A file size limit makes write() fail with EFBIG, as a full disk would
  // with ENOSPC; SIGXFSZ would end the test otherwise.
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  sighandler_t old_handler = signal(SIGXFSZ, SIG_IGN);
  Status committed = Ok{};
  {
    auto stream = AtomicFileStream::Open(path);
    ASSERT_TRUE(stream.ok());
    for (int i = 0; i < 10; ++i) (*stream)->Append(std::string(1000, 'x'));
    committed = (*stream)->Commit();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(committed.error().Message().find(path), std::string::npos) << committed.error().Message();
  EXPECT_NE(committed.error().Message().find("cannot write"), std::string::npos) << committed.error().Message();
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(FilesIn(dir.path()), 1);
}

TEST(AtomicFileStream, OpenInAMissingFolderNamesThePath) {
  TempDir dir;
  std::string path = dir.File("no/such/folder/out.json");
  auto stream = AtomicFileStream::Open(path);
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.error().Message().find(path), std::string::npos);
  EXPECT_NE(stream.error().Message().find("No such file"), std::string::npos) << stream.error().Message();
}

TEST(WriteFileAtomically, ReplacesTheFileWhole) {
  TempDir dir;
  std::string path = dir.File("plan.json");
  Spit(path, "old");
  ASSERT_TRUE(WriteFileAtomically(path, "new contents\n").ok());
  EXPECT_EQ(ReadFile(path), "new contents\n");
  EXPECT_EQ(FilesIn(dir.path()), 1);
}

}  // namespace
}  // namespace topolaunch
