// Output files written as root into folders other users control: every
// way a user could make root write where they choose is refused, naming
// the link and its owner, and leaves the file they aimed at as it was;
// what root and the caller made themselves keeps working. Root only (the
// other user is uid 65534, nobody, which exists on every Debian system).
#include "core/output_place.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

using testing::ReadFile;
using testing::TempDir;

constexpr uid_t kOther = 65534;

void Spit(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool IsLink(const std::string& path) { return std::filesystem::is_symlink(std::filesystem::symlink_status(path)); }

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

class OutputAsRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the attacks are on root's writes";
    // What the user aimed at: a root file, 0600, that must stay as it is.
    victim_ = dir_.File("shadow");
    Spit(victim_, "root:secret\n");
    ASSERT_EQ(chmod(victim_.c_str(), 0600), 0);
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  }
  // A folder DIR/name owned by `owner` with `mode`.
  std::string Folder(const std::string& name, uid_t owner, mode_t mode) {
    std::string path = dir_.File(name);
    EXPECT_EQ(mkdir(path.c_str(), 0755), 0);
    EXPECT_EQ(chown(path.c_str(), owner, owner), 0);
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }
  // A symbolic link at `path` to `target`, owned by `owner`.
  void Link(const std::string& target, const std::string& path, uid_t owner) {
    ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
    ASSERT_EQ(lchown(path.c_str(), owner, owner), 0);
  }
  void ExpectRefusedAndVictimUntouched(const std::string& path, const std::string& words) {
    Status written = WriteFileAtomically(path, "{\"json\": true}\n");
    ASSERT_FALSE(written.ok()) << path << " was written";
    EXPECT_EQ(written.error().code, ErrorCode::kBadInput);
    EXPECT_NE(written.error().Message().find(words), std::string::npos) << written.error().Message();
    EXPECT_EQ(ReadFile(victim_), "root:secret\n");
    EXPECT_EQ(StatOf(victim_).st_mode & 0777, 0600u);
  }
  TempDir dir_;
  std::string victim_;
};

// The reproduced attack: DIR owned by a user, DIR/out.json -> the victim.
TEST_F(OutputAsRoot, ALinkPlantedByAnotherUserIsNotFollowed) {
  std::string dir = Folder("user", kOther, 0755);
  Link(victim_, dir + "/out.json", kOther);
  ExpectRefusedAndVictimUntouched(dir + "/out.json", "owned by nobody (uid 65534)");
  EXPECT_TRUE(IsLink(dir + "/out.json"));
}

TEST_F(OutputAsRoot, ARootLinkInAUsersFolderIsNotFollowed) {
  std::string dir = Folder("user", kOther, 0755);
  Link(victim_, dir + "/out.json", 0);  // the user can still replace it
  ExpectRefusedAndVictimUntouched(dir + "/out.json", "in a folder owned by nobody (uid 65534)");
}

TEST_F(OutputAsRoot, ALinkInAFolderOthersCanWriteIsNotFollowed) {
  std::string dir = Folder("shared", 0, 0777);
  Link(victim_, dir + "/out.json", 0);
  ExpectRefusedAndVictimUntouched(dir + "/out.json", "in a folder that others can write");
}

TEST_F(OutputAsRoot, ALinkFurtherUpThePathIsJudgedToo) {
  std::string dir = Folder("user", kOther, 0755);
  Link(dir_.path(), dir + "/up", kOther);
  ExpectRefusedAndVictimUntouched(dir + "/up/shadow", "owned by nobody (uid 65534)");
}

TEST_F(OutputAsRoot, InAStickyFolderOnlyRootsAndTheCallersLinksAreFollowed) {
  std::string tmp = Folder("tmp", 0, 01777);
  Link(victim_, tmp + "/theirs.json", kOther);
  ExpectRefusedAndVictimUntouched(tmp + "/theirs.json", "owned by nobody (uid 65534)");

  Spit(dir_.File("mine.json"), "old\n");
  Link(dir_.File("mine.json"), tmp + "/mine.json", 0);
  Status written = WriteFileAtomically(tmp + "/mine.json", "new\n");
  ASSERT_TRUE(written.ok()) << written.error().Message();
  EXPECT_EQ(ReadFile(dir_.File("mine.json")), "new\n");
  EXPECT_TRUE(IsLink(tmp + "/mine.json"));
}

// The README's case: /etc/slurm/topology.conf -> a shared copy, root's chain.
TEST_F(OutputAsRoot, ARootOwnedChainIsFollowed) {
  std::string shared = Folder("shared", 0, 0755);
  std::string etc = Folder("etc", 0, 0755);
  Spit(shared + "/topology.conf", "old\n");
  Link(shared + "/topology.conf", etc + "/topology.conf", 0);
  Link(etc, dir_.File("etc-link"), 0);
  ASSERT_TRUE(WriteFileAtomically(dir_.File("etc-link/topology.conf"), "new\n").ok());
  EXPECT_EQ(ReadFile(shared + "/topology.conf"), "new\n");
  EXPECT_TRUE(IsLink(etc + "/topology.conf"));
}

TEST_F(OutputAsRoot, ALinkToNothingNeverCreatesAFile) {
  Link(dir_.File("made-by-root"), dir_.File("out.json"), 0);
  Status written = WriteFileAtomically(dir_.File("out.json"), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().Message().find("a symbolic link to nothing"), std::string::npos) << written.error().Message();
  EXPECT_FALSE(std::filesystem::exists(dir_.File("made-by-root")));
}

TEST_F(OutputAsRoot, ABlockDeviceIsNeverWritten) {
  std::string device = dir_.File("loop");
  ASSERT_EQ(mknod(device.c_str(), S_IFBLK | 0600, makedev(7, 250)), 0);
  Link(device, dir_.File("out.json"), 0);
  Status written = WriteFileAtomically(dir_.File("out.json"), "x");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().Message().find("a block device"), std::string::npos) << written.error().Message();
  EXPECT_TRUE(S_ISBLK(StatOf(device).st_mode));
}

TEST_F(OutputAsRoot, AReplacedFileKeepsItsModeAndOwner) {
  std::string file = dir_.File("users.conf");
  Spit(file, "old\n");
  ASSERT_EQ(chown(file.c_str(), 4242, 4243), 0);
  ASSERT_EQ(chmod(file.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(file, "new\n").ok());
  struct stat st = StatOf(file);
  EXPECT_EQ(ReadFile(file), "new\n");
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_gid, 4243u);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(OutputPlace, DevNullIsWrittenInPlace) {
  Result<OutputPlace> place = FindOutputPlace("/dev/null", geteuid());
  ASSERT_TRUE(place.ok()) << place.error().Message();
  EXPECT_EQ(place->kind, OutputPlace::Kind::kInPlace);
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "x").ok());
  EXPECT_TRUE(S_ISCHR(StatOf("/dev/null").st_mode));
}

// /dev/stdout leads to /proc/self/fd/1, which names a pipe as "pipe:[N]".
TEST(OutputPlace, AnOpenPipeIsWrittenThroughProc) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  Status written = WriteFileAtomically("/proc/self/fd/" + std::to_string(ends[1]), "through the pipe\n");
  ASSERT_TRUE(written.ok()) << written.error().Message();
  close(ends[1]);
  char buffer[64] = {};
  ssize_t n = read(ends[0], buffer, sizeof buffer - 1);
  close(ends[0]);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "through the pipe\n");
}

TEST(OutputPlace, TheWalkEndsInTheFolderThatHoldsTheFile) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.File("sub").c_str(), 0755), 0);
  Result<OutputPlace> place = FindOutputPlace(dir.File("sub/../sub/./new.json"), geteuid());
  ASSERT_TRUE(place.ok()) << place.error().Message();
  EXPECT_EQ(place->kind, OutputPlace::Kind::kNew);
  EXPECT_EQ(place->name, "new.json");
  struct stat folder {}, sub {};
  ASSERT_EQ(fstat(place->folder, &folder), 0);
  ASSERT_EQ(stat(dir.File("sub").c_str(), &sub), 0);
  EXPECT_EQ(folder.st_ino, sub.st_ino);
}

}  // namespace
}  // namespace topolaunch
