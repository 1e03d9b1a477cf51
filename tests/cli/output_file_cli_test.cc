// `-o` as root on a shared machine, through the real binary: the security
// review's attack (a user's folder, a link in it to a root file) ends in
// exit 2 naming the link and its owner, with the root file untouched; the
// root-owned chain and /dev/stdout into a pipe keep working.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace topolaunch::testing {
namespace {

std::string Fabric() { return TestDataDir() + "/ibnet/doc-manpage-ibnetdiscover-2sw-4ca.ibnet"; }

class OutputFileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on root's -o";
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    victim_ = dir_.File("shadow");
    std::ofstream(victim_) << "root:secret\n";
    ASSERT_EQ(chmod(victim_.c_str(), 0600), 0);
  }
  TempDir dir_;
  std::string victim_;
};

TEST_F(OutputFileCli, RootsOutputThroughAnotherUsersLinkIsRefused) {
  std::string user = dir_.File("user");
  ASSERT_EQ(mkdir(user.c_str(), 0755), 0);
  ASSERT_EQ(chown(user.c_str(), 65534, 65534), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (user + "/out.json").c_str()), 0);
  ASSERT_EQ(lchown((user + "/out.json").c_str(), 65534, 65534), 0);

  ProcessResult r = RunTopolaunch({"discover", "--fabric", Fabric(), "-o", user + "/out.json"});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: error: " + user + "/out.json: " + user + "/out.json is a symbolic link owned by "
                       "nobody (uid 65534): not followed"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(victim_), "root:secret\n");
  struct stat st {};
  ASSERT_EQ(stat(victim_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(OutputFileCli, RootsOwnChainIsFollowed) {
  std::string shared = dir_.File("shared-topology.json");
  std::ofstream(shared) << "old\n";
  ASSERT_EQ(symlink(shared.c_str(), dir_.File("topology.json").c_str()), 0);
  ProcessResult r = RunTopolaunch({"discover", "--fabric", Fabric(), "-o", dir_.File("topology.json")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(ReadFile(shared).find("\"switches\""), std::string::npos) << ReadFile(shared);
}

TEST_F(OutputFileCli, DevStdoutIntoAPipe) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "\"$0\" discover --fabric \"$1\" -o /dev/stdout | wc -c", TopolaunchBinary(), Fabric()};
  ProcessResult r = RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_GT(std::stol(r.out), 1000) << r.out;
  EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
}

// A link planted in a shared --log-dir would choose what `run` truncates.
TEST_F(OutputFileCli, RunsLogFilesAreNeverOpenedThroughALink) {
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
  std::string host(name);
  host = host.substr(0, host.find('.'));
  std::string logs = dir_.File("logs");
  ASSERT_EQ(mkdir(logs.c_str(), 0777), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (logs + "/" + host + ".log").c_str()), 0);
  std::ofstream(dir_.File("x.py")) << "print(1)\n";
  ProcessSpec spec;
  spec.argv = {TopolaunchBinary(), "run", "--no-gpus", "--log-dir", logs, "--dry-run", "x.py"};
  spec.cwd = dir_.path();
  ProcessResult r = RunProcess(spec);
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find(logs + "/" + host + ".log"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(victim_), "root:secret\n");
}

}  // namespace
}  // namespace topolaunch::testing
