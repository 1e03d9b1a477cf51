// AtomicFileStream and WriteFileAtomically on a real file system: the path
// holds the old file or the whole new one, never a part, and no temporary
// file is left behind either way.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

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

// `path` itself, not what it points to.
bool IsSymlink(const std::string& path) { return std::filesystem::is_symlink(std::filesystem::symlink_status(path)); }

// A symlink to a regular file, as /etc/slurm/topology.conf often is to a
// shared copy: the copy gets the new contents, the link stays a link, and
// no temporary file is left in either folder.
TEST(WriteFileAtomically, ThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  TempDir dir;
  std::filesystem::create_directory(dir.File("shared"));
  Spit(dir.File("shared/topology.conf"), "old");
  std::filesystem::create_symlink("shared/topology.conf", dir.File("topology.conf"));
  ASSERT_TRUE(WriteFileAtomically(dir.File("topology.conf"), "new\n").ok());
  EXPECT_TRUE(IsSymlink(dir.File("topology.conf")));
  EXPECT_EQ(ReadFile(dir.File("shared/topology.conf")), "new\n");
  EXPECT_EQ(FilesIn(dir.path()), 2);
  EXPECT_EQ(FilesIn(dir.File("shared")), 1);
}

TEST(AtomicFileStream, ThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  TempDir dir;
  Spit(dir.File("real.json"), "old");
  std::filesystem::create_symlink("real.json", dir.File("topology.json"));
  auto stream = AtomicFileStream::Open(dir.File("topology.json"));
  ASSERT_TRUE(stream.ok()) << stream.error().Message();
  (*stream)->Append("{\"a\": ");
  (*stream)->Append("1}\n");
  ASSERT_TRUE((*stream)->Commit().ok());
  EXPECT_TRUE(IsSymlink(dir.File("topology.json")));
  EXPECT_EQ(ReadFile(dir.File("real.json")), "{\"a\": 1}\n");
  EXPECT_EQ(FilesIn(dir.path()), 2);
}

// A link to a file not there yet is never followed to create it: whoever
// made the link would choose where the file appears (core/output_place.h).
TEST(WriteFileAtomically, ThroughALinkToNothingYetCreatesNothing) {
  TempDir dir;
  std::filesystem::create_symlink("later.conf", dir.File("topology.conf"));
  Status written = WriteFileAtomically(dir.File("topology.conf"), "made\n");
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::kBadInput);
  EXPECT_NE(written.error().Message().find("a symbolic link to nothing"), std::string::npos) << written.error().Message();
  EXPECT_TRUE(IsSymlink(dir.File("topology.conf")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("later.conf")));
}

// What is not a regular file is written in place, never renamed over: as
// root, `-o /dev/null` once made /dev/null a regular file for the whole
// machine. A FIFO stands in for it here (no privilege needed): it must still
// be a FIFO afterwards, and its reader gets the bytes.
class WrittenInPlace : public ::testing::Test {
 protected:
  void SetUp() override {
    fifo_ = dir_.File("out.fifo");
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    reader_ = open(fifo_.c_str(), O_RDONLY | O_NONBLOCK);  // so that opening it to write does not wait
    ASSERT_GE(reader_, 0);
  }
  void TearDown() override {
    if (reader_ >= 0) close(reader_);
  }
  bool StillAFifo() const {
    struct stat st {};
    return lstat(fifo_.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  }
  std::string Drain() const {
    std::string got;
    char buf[256];
    for (ssize_t n; (n = read(reader_, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    return got;
  }
  TempDir dir_;
  std::string fifo_;
  int reader_ = -1;
};

TEST_F(WrittenInPlace, WriteFileAtomicallyLeavesAFifoAFifo) {
  ASSERT_TRUE(WriteFileAtomically(fifo_, "to the reader\n").ok());
  EXPECT_TRUE(StillAFifo());
  EXPECT_EQ(Drain(), "to the reader\n");
  EXPECT_EQ(FilesIn(dir_.path()), 1);
}

TEST_F(WrittenInPlace, AtomicFileStreamLeavesAFifoAFifo) {
  auto stream = AtomicFileStream::Open(fifo_);
  ASSERT_TRUE(stream.ok()) << stream.error().Message();
  (*stream)->Append("one ");
  (*stream)->Append("two\n");
  ASSERT_TRUE((*stream)->Commit().ok());
  EXPECT_TRUE(StillAFifo());
  EXPECT_EQ(Drain(), "one two\n");
  EXPECT_EQ(FilesIn(dir_.path()), 1);
}

TEST(WriteFileAtomically, AFolderIsRefusedNamingIt) {
  TempDir dir;
  Status written = WriteFileAtomically(dir.path(), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().Message().find(dir.path()), std::string::npos);
  EXPECT_NE(written.error().Message().find("Is a directory"), std::string::npos) << written.error().Message();
  EXPECT_EQ(FilesIn(dir.path()), 0);
}

}  // namespace
}  // namespace topolaunch
