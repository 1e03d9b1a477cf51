// `run --max-restarts` on this machine alone (local launcher, Debian's
// torchrun): a worker failing once restarts on the same node and the job
// succeeds; failing every time uses the restarts up and names each
// failure; Ctrl-C during the restart delay ends the run with nothing left.
// Each fails without --max-restarts (the first failure would end the job).
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "support/proc_scan.h"

namespace topolaunch::testing {
namespace {

using std::chrono::milliseconds;

const char* kTorchrun = "/usr/bin/torchrun --redirects 9:0 --tee 9:0";  // Debian's torch 1.13 needs both (TESTBED.md)

// Rank 1 fails in the first attempt (TOPOLAUNCH_RESTART_COUNT 0), then the job succeeds.
constexpr const char* kFailOnce = R"PY(import os, sys
count = os.environ["TOPOLAUNCH_RESTART_COUNT"]
print("attempt", count, "rank", os.environ["RANK"], flush=True)
if count == "0" and os.environ["RANK"] == "1":
    sys.exit(3)
)PY";

constexpr const char* kFailAlways = R"PY(import os, sys
print("attempt", os.environ.get("TOPOLAUNCH_RESTART_COUNT"), flush=True)
sys.exit(4)
)PY";

class RunRestartCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/torchrun", X_OK) != 0) GTEST_FAIL() << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
    return dir_.File(name);
  }
  std::vector<std::string> Run(std::vector<std::string> extra, const std::string& script) {
    std::vector<std::string> args = {"run", "--nproc-per-node", "2", "--no-gpus", "--master-port", std::to_string(FreePort()),
                                     "--grace", "1", "--torchrun", kTorchrun, "--python", "/usr/bin/python3"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(script);
    return args;
  }
  TempDir dir_;
};

TEST_F(RunRestartCli, AWorkerFailingOnceRestartsOnTheSameNodeAndTheJobSucceeds) {
  std::string script = Write("once.py", kFailOnce);
  ProcessResult r = RunTopolaunch(Run({"--max-restarts", "2", "--restart-delay", "0.5", "--failed-hosts", dir_.File("lost")}, script));
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << r.err;
  EXPECT_NE(r.out.find("1: attempt 0 rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1: attempt 1 rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("restart 1 of 2 in 0.5 s, on the same nodes (a worker failed, every node is healthy)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("attempts: 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("worker failed: local rank 1 exit code 3"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir_.File("lost")), "") << "no node was lost";
}

TEST_F(RunRestartCli, UsedUpRestartsFailNamingEachAttempt) {
  std::string script = Write("always.py", kFailAlways);
  ProcessResult r = RunTopolaunch(Run({"--max-restarts", "1", "--restart-delay", "0"}, script));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.out.find("attempt 1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("--max-restarts 1 used up: the job failed"), std::string::npos) << r.err;
  size_t at = r.err.find("attempts: 2");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string list = r.err.substr(at);
  EXPECT_NE(list.find("first"), std::string::npos) << list;
  EXPECT_NE(list.find("restart 1"), std::string::npos) << list;
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 3) << list;
}

// More than the job's nodes could never let it go on with fewer: refused
// before anything starts, naming the flag.
TEST_F(RunRestartCli, MinNnodesAboveTheJobsNodesIsBadUsage) {
  std::string script = Write("always.py", kFailAlways);
  ProcessResult r = RunTopolaunch(Run({"--max-restarts", "1", "--min-nnodes", "2"}, script));
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("--min-nnodes: 2 is more than the job's 1 node(s)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("attempt"), std::string::npos) << "nothing may start: " << r.out;
}

TEST_F(RunRestartCli, CtrlCDuringTheRestartDelayEndsWithNothingLeft) {
  std::string script = Write("always.py", kFailAlways);
  ProcessSpec spec;
  spec.argv = {TopolaunchBinary()};
  std::vector<std::string> args = Run({"--max-restarts", "3", "--restart-delay", "60"}, script);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  Result<std::unique_ptr<BackgroundProcess>> run = BackgroundProcess::Start(spec, dir_.File("run.log"));
  ASSERT_TRUE(run.ok()) << run.error().Message();
  ASSERT_TRUE((*run)->WaitForLog("restart 1 of 3 in 60 s", milliseconds(60'000)).ok()) << (*run)->ReadLog();
  auto sent = std::chrono::steady_clock::now();
  kill((*run)->pid(), SIGINT);
  while ((*run)->Running() && std::chrono::steady_clock::now() - sent < milliseconds(10'000))
    std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE((*run)->Running());
  EXPECT_LT(std::chrono::steady_clock::now() - sent, milliseconds(3000));
  std::string log = (*run)->ReadLog();
  EXPECT_NE(log.find("interrupted during the restart delay: nothing is running"), std::string::npos) << log;
  EXPECT_NE(log.find("attempts: 1"), std::string::npos) << log;
  EXPECT_EQ(log.find("attempt 1\n"), std::string::npos) << "a second attempt started: " << log;
  EXPECT_EQ(CommandLinesHolding(script), std::vector<std::string>{}) << "a process of the job is left";
}

}  // namespace
}  // namespace topolaunch::testing
