// What ended an attempt: a lost node (agent gone) or a worker's failure on
// a healthy node; nodes `run` stopped itself are neither.
#include "launch/attempt_outcome.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

NodeOutcome Ended(ExitInfo exit, bool stopped = false, std::string failure = "") {
  NodeOutcome o;
  o.exit = exit;
  o.stopped = stopped;
  o.failure = std::move(failure);
  return o;
}

const std::vector<SessionNode> kNodes = {{"node1", 0}, {"node2", 1}, {"node3", 2}};

TEST(AttemptOutcome, TheAgentGoneIsALostNode) {
  EXPECT_TRUE(NodeLost(Ended({.exit_code = -1, .connection_lost = true})));
  EXPECT_TRUE(NodeLost(Ended({.exit_code = -1, .signal = "KILL"})));
  EXPECT_FALSE(NodeLost(Ended({.exit_code = 1}))) << "the agent reported its command's status";
  EXPECT_FALSE(NodeLost(Ended({.exit_code = 137}))) << "a worker killed, reported by a live agent";
  EXPECT_FALSE(NodeLost(Ended({.exit_code = -1, .connection_lost = true}, /*stopped=*/true))) << "we stopped it";
  EXPECT_FALSE(NodeLost(Ended({.exit_code = -1, .signal = "TERM"}, false, "worker failed: local rank 0 exit code 3")));
  EXPECT_FALSE(NodeLost(NodeOutcome{})) << "never started";
}

TEST(AttemptOutcome, LostNodesComeBeforeTheFirstFailure) {
  SessionReport report;
  report.nodes = {Ended({.exit_code = 1}, false, "worker failed: local rank 0 exit code 1"),
                  Ended({.exit_code = -1, .connection_lost = true}), Ended({.exit_code = -1, .signal = "TERM"}, true)};
  report.first_failure = 0;
  AttemptFailure f = ClassifyFailure(kNodes, report);
  EXPECT_EQ(f.lost, std::vector<size_t>{1});
  EXPECT_FALSE(f.worker_node.has_value());
  EXPECT_EQ(f.what, "node(s) lost: node2 (connection lost)");
}

TEST(AttemptOutcome, AWorkerFailureOnHealthyNodes) {
  SessionReport report;
  report.nodes = {Ended({.exit_code = -1, .signal = "TERM"}, true), Ended({.exit_code = 1}, false, "worker failed: local rank 1 exit code 3 (torchrun)"),
                  Ended({.exit_code = -1, .signal = "TERM"}, true)};
  report.first_failure = 1;
  AttemptFailure f = ClassifyFailure(kNodes, report);
  EXPECT_TRUE(f.lost.empty());
  EXPECT_EQ(f.worker_node, 1u);
  EXPECT_EQ(f.what, "node2: worker failed: local rank 1 exit code 3 (torchrun)");
}

TEST(AttemptOutcome, TheAttemptsListOneLineEach) {
  std::string text = FormatAttempts({{0, {"node1", "node2", "node3"}, "failed: node(s) lost: node3 (connection lost)", std::chrono::milliseconds(12300)},
                                     {1, {"node1", "node2", "node4"}, "ok", std::chrono::milliseconds(45000)}});
  EXPECT_EQ(text,
            "attempts: 2\n"
            "  first         12.3 s  node[1-3]: failed: node(s) lost: node3 (connection lost)\n"
            "  restart 1     45.0 s  node[1-2,4]: ok\n");
}

}  // namespace
}  // namespace topolaunch
