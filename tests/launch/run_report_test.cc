#include "launch/run_report.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

// torch 1.13's report after a worker exits 3 (captured from Debian's torchrun).
std::deque<std::string> TorchrunFailureTail() {
  return {"rank 2 exiting with 3",
          "some earlier line",
          "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 3) local_rank: 0 (pid: 26518) of binary: /usr/bin/python3",
          "Traceback (most recent call last):",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          "============================================================",
          "Root Cause (first observed failure):",
          "[0]:",
          "  time      : 2026-11-29_10:37:23",
          "  host      : node2",
          "  rank      : 2 (local_rank: 0)",
          "  exitcode  : 3 (pid: 26518)",
          "  error_file: <N/A>",
          "============================================================"};
}

Plan TwoNodes() {
  Plan plan;
  plan.nproc_per_node = 2;
  plan.world_size = 4;
  plan.nodes.resize(2);
  plan.nodes[0].host = "node1", plan.nodes[0].node_rank = 0, plan.nodes[0].first_rank = 0;
  plan.nodes[1].host = "node2", plan.nodes[1].node_rank = 1, plan.nodes[1].first_rank = 2;
  return plan;
}

TEST(RunReportTest, FindsTorchrunRootCause) {
  std::optional<TorchrunRootCause> cause = FindTorchrunRootCause(TorchrunFailureTail());
  ASSERT_TRUE(cause);
  EXPECT_EQ(*cause, (TorchrunRootCause{2, 0, "3"}));
  EXPECT_FALSE(FindTorchrunRootCause({"  rank      : 2 (local_rank: 0)"}));  // no header: not torchrun's block
}

TEST(RunReportTest, StoppedBeforeItsReportTheFailedLineStillNamesTheWorker) {
  std::deque<std::string> tail = TorchrunFailureTail();
  tail.resize(3);  // stopped while torch 1.13 waited for the other nodes
  std::optional<TorchrunRootCause> cause = FindTorchrunRootCause(tail);
  ASSERT_TRUE(cause);
  EXPECT_EQ(*cause, (TorchrunRootCause{-1, 0, "3"}));
  SessionReport report;
  report.nodes.resize(2);
  report.nodes[0].exit = ExitInfo{.exit_code = 143};
  report.nodes[0].stopped = true;
  report.nodes[1].exit = ExitInfo{.exit_code = 143};
  report.nodes[1].failure = "worker failed: local rank 0 exit code 3 (torchrun)";
  report.nodes[1].tail = tail;
  report.first_failure = 1;
  std::string text = FormatRunSummary(TwoNodes(), report, std::chrono::milliseconds(1000));
  EXPECT_NE(text.find("torchrun's root cause: rank 2 (local rank 0) exit code 3"), std::string::npos) << text;
  // Its own failure, not "stopped (exit 143)" like the node stopped because of it.
  EXPECT_NE(text.find("node2 2-3       worker failed: local rank 0 exit code 3 (torchrun) (then exit 143)   <- first failure"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("first failure: node2 (node rank 1, ranks 2-3): worker failed: local rank 0 exit code 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("node1 0-1       stopped (exit 143)"), std::string::npos) << text;
}

TEST(RunReportTest, LastWorkerLinesStopBeforeTorchrunsReport) {
  EXPECT_EQ(LastWorkerLines(TorchrunFailureTail(), 1), std::vector<std::string>{"some earlier line"});
  EXPECT_EQ(LastWorkerLines(TorchrunFailureTail(), 5), (std::vector<std::string>{"rank 2 exiting with 3", "some earlier line"}));
  EXPECT_EQ(LastWorkerLines({"a", "b", "c"}, 2), (std::vector<std::string>{"b", "c"}));
  // The failing rank's own lines when it wrote any, whatever came after them.
  std::deque<std::string> labelled = {"0: step 1", "1: step 1", "1: NaN in loss", "0: step 2", "torchrun's report"};
  EXPECT_EQ(LastWorkerLines(labelled, 5, 1), (std::vector<std::string>{"1: step 1", "1: NaN in loss"}));
  EXPECT_EQ(LastWorkerLines(labelled, 1, 1), std::vector<std::string>{"1: NaN in loss"});
  EXPECT_EQ(LastWorkerLines({"a", "b"}, 5, 3), (std::vector<std::string>{"a", "b"}));
}

TEST(RunReportTest, SummaryNamesFirstFailureRootCauseAndStoppedNodes) {
  SessionReport report;
  report.nodes.resize(2);
  report.nodes[0].exit = ExitInfo{.exit_code = 143};
  report.nodes[0].stopped = true;
  report.nodes[1].exit = ExitInfo{.exit_code = 1};
  report.nodes[1].tail = TorchrunFailureTail();
  report.first_failure = 1;
  std::string text = FormatRunSummary(TwoNodes(), report, std::chrono::milliseconds(7250));
  EXPECT_NE(text.find("node1 0-1       stopped (exit 143)"), std::string::npos) << text;
  EXPECT_NE(text.find("node2 2-3       exit 1   <- first failure"), std::string::npos) << text;
  EXPECT_NE(text.find("first failure: node2 (node rank 1, ranks 2-3): exit 1; torchrun's root cause: rank 2 (local rank 0) exit code 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  | rank 2 exiting with 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0 of 2 node(s) ok; failed, every other node stopped; wall time 7.2 s"), std::string::npos) << text;
}

TEST(RunReportTest, SummaryOfSuccessAndInterrupt) {
  SessionReport report;
  report.nodes.resize(2);
  report.nodes[0].exit = ExitInfo{.exit_code = 0};
  report.nodes[1].exit = ExitInfo{.exit_code = 0};
  EXPECT_NE(FormatRunSummary(TwoNodes(), report, std::chrono::milliseconds(1000)).find("2 of 2 node(s) ok; succeeded"), std::string::npos);
  report.interrupted = true;
  report.nodes[1].stopped = true;
  report.nodes[1].exit = ExitInfo{.exit_code = -1, .signal = "TERM"};
  std::string text = FormatRunSummary(TwoNodes(), report, std::chrono::milliseconds(1000));
  EXPECT_NE(text.find("stopped (signal TERM)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 node(s) ok; interrupted, every node stopped"), std::string::npos) << text;
}

TEST(RunReportTest, DryRunMasksSecretsAndQuotes) {
  Plan plan = TwoNodes();
  std::vector<LaunchMessage> messages(2);
  messages[0].command = Command{{"torchrun", "--node_rank=0", "t.py", "a b"}, {{"NCCL_DEBUG", "WARN"}, {"HF_TOKEN", "hf_abc"}}, "/w d"};
  messages[1].command = Command{{"torchrun", "--node_rank=1", "t.py", "a b"}};
  std::string text = FormatDryRun(plan, messages);
  EXPECT_EQ(text,
            "# node rank 0: node1 (ranks 0-1)\n"
            "cd '/w d'\n"
            "export NCCL_DEBUG='WARN'\n"
            "export HF_TOKEN='****'\n"
            "'torchrun' '--node_rank=0' 't.py' 'a b'\n\n"
            "# node rank 1: node2 (ranks 2-3)\n"
            "'torchrun' '--node_rank=1' 't.py' 'a b'\n\n");
  EXPECT_EQ(text.find("hf_abc"), std::string::npos);
}

TEST(RunReportTest, PreflightProblemsListEveryBadHost) {
  std::vector<SessionNode> nodes = {{"node1", 0}, {"node2", 1}, {"node3", 2}};
  std::string text = FormatPreflightProblems(nodes, {{}, {"torchrun not found", "port 29500 in use"}, {"unreachable"}});
  EXPECT_EQ(text, "  node2: torchrun not found\n  node2: port 29500 in use\n  node3: unreachable\n");
}

}  // namespace
}  // namespace topolaunch
