// `run`'s command line as a torchrun or srun user types it: a mistyped
// option before SCRIPT is refused before anything starts (it used to become
// the script, and a real job started), torchrun's and srun's spellings are
// `run`'s own, and python3's flags before the script still reach python3.
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace topolaunch::testing {
namespace {

class RunOptionsCli : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_.File("x.py")) << "print(1)\n"; }
  ProcessResult Run(std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {TopolaunchBinary(), "run"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = dir_.path();
    spec.timeout = std::chrono::seconds(60);
    return RunProcess(spec);
  }
  TempDir dir_;
};

TEST_F(RunOptionsCli, AMistypedOptionIsRefusedAndNothingStarts) {
  ProcessResult r = Run({"--no-gpus", "--dryrun", "x.py"});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: error: run: unknown option --dryrun before SCRIPT (did you mean --dry-run?)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("preflight"), std::string::npos) << "no node was asked anything: " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  ProcessResult unknown = Run({"--no-gpus", "--rdzv-endpoint", "h:29500", "--dry-run", "x.py"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.Describe();
  EXPECT_NE(unknown.err.find("unknown option --rdzv-endpoint before SCRIPT"), std::string::npos) << unknown.err;
}

// --connect-back-address is for srun's agents, and an address: elsewhere,
// or a name, it is refused before anything starts.
TEST_F(RunOptionsCli, AConnectBackAddressIsRefusedWithoutSrunOrWhenNotAnAddress) {
  ProcessResult local = Run({"--no-gpus", "--launcher", "local", "--connect-back-address", "127.0.0.1", "--dry-run", "x.py"});
  EXPECT_EQ(local.exit_code, 2) << local.Describe();
  EXPECT_NE(local.err.find("--connect-back-address: only the srun launcher's agents connect back"), std::string::npos)
      << local.err;
  EXPECT_EQ(local.err.find("preflight"), std::string::npos) << local.err;
  ProcessResult name = Run({"--no-gpus", "--connect-back-address", "login1", "--dry-run", "x.py"});
  EXPECT_EQ(name.exit_code, 2) << name.Describe();
  EXPECT_NE(name.err.find("--connect-back-address: 'login1' is not a numeric IPv4 or IPv6 address"), std::string::npos)
      << name.err;
}

TEST_F(RunOptionsCli, SrunsDashNIsNnodes) {
  ProcessResult r = Run({"--no-gpus", "-N", "2", "--dry-run", "x.py"});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("--nnodes: 2 nodes asked for, but the pool has 1 usable host(s)"), std::string::npos) << r.err;
}

TEST_F(RunOptionsCli, TorchrunsSpellingsAndPythonsFlagsBeforeTheScript) {
  if (access("/usr/bin/torchrun", X_OK) != 0) GTEST_SKIP() << "no torchrun (python3-torch)";
  ProcessResult r = Run({"--no-gpus", "--nproc_per_node", "2", "--master_port", "29611", "-u", "--dry-run", "x.py", "--lr"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("'--nproc_per_node=2'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'--master_port=29611'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'-u' 'x.py' '--lr'"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace topolaunch::testing
