// RunSession against the recording FakeExecutor: what each agent was sent,
// who was stopped, and what the report says.
#include "launch/run_session.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "support/fake_executor.h"

namespace topolaunch {
namespace {

using std::chrono::milliseconds;
using testing::FakeExecutor;

class RecordingPrinter : public LinePrinter {
 public:
  void Line(const NodeLine& line) override {
    std::string label = line.label.rank < 0 ? "" : std::to_string(line.label.rank) + " ";
    lines.push_back(std::to_string(line.node) + ":" + label + std::string(line.text));
  }
  std::vector<std::string> lines;
};

constexpr int64_t kNow = 1'700'000'000'000;

std::string ReplyLine(const std::string& host) {
  PreflightReply reply;
  reply.hostname = host;
  reply.unix_time_ms = kNow;
  std::string line = FormatPreflightReply(reply);
  line.pop_back();  // the sink gets lines without '\n'
  return line;
}

// An agent that replies, then waits for its launch message, then runs.
FakeExecutor::Script Agent(const std::string& host, ExitInfo exit, milliseconds run_time, bool until_stopped = false) {
  FakeExecutor::Script script;
  script.lines = {{OutputStream::kStdout, "motd noise"}, {OutputStream::kStdout, ReplyLine(host)}};
  script.on_write_lines = {{OutputStream::kStdout, host + " training"}};
  script.wait_for_write = true;
  script.run_time = run_time;
  script.exit = exit;
  script.runs_until_stopped = until_stopped;
  return script;
}

SessionOptions Options() {
  SessionOptions options;
  options.agent = Command{{"/opt/topolaunch", "agent"}};
  options.preflight.programs = {"torchrun"};
  options.preflight_timeout = milliseconds(2000);
  options.stop_grace = milliseconds(100);
  options.failed_node_settle = milliseconds(300);
  options.now_ms = [] { return kNow + 5; };
  return options;
}

std::vector<LaunchMessage> Messages(size_t n) {
  std::vector<LaunchMessage> messages(n);
  for (size_t i = 0; i < n; ++i) messages[i].command = Command{{"torchrun", "--node_rank=" + std::to_string(i)}};
  return messages;
}

TEST(RunSessionTest, PreflightTakesTheReplyOutOfTheOutput) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {.exit_code = 0}, milliseconds(0)));
  executor.SetScript("b", Agent("b", {.exit_code = 0}, milliseconds(0)));
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, Options(), printer);
  std::atomic<bool> stop{false};
  std::vector<NodePreflight> preflight = session.Preflight(stop);
  ASSERT_EQ(preflight.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(preflight[i].reply) << preflight[i].failure;
    EXPECT_EQ(preflight[i].sent_ms, kNow + 5);
    EXPECT_EQ(preflight[i].received_ms, kNow + 5);
  }
  EXPECT_EQ(preflight[1].reply->hostname, "b");
  EXPECT_EQ(printer.lines, (std::vector<std::string>{"0:motd noise", "1:motd noise"}));
  ASSERT_EQ(executor.requests().size(), 2u);
  EXPECT_EQ(executor.requests()[0].command.argv, (std::vector<std::string>{"/opt/topolaunch", "agent"}));
  EXPECT_FALSE(executor.requests()[0].close_stdin);
  EXPECT_TRUE(IsPreflightRequest(executor.requests()[0].stdin_data));
}

// A command's last lines can come as it is destroyed (srun's "task 1:
// Killed" as the srun executor's step ends with its last node's command):
// they reach the printer while every node's state is whole (ASan saw them
// written into a node's freed state, and glibc once aborted on it).
TEST(RunSessionTest, LinesACommandSaysAsItIsDestroyedArePrinted) {
  FakeExecutor executor;
  for (const char* host : {"a", "b", "c"}) {
    FakeExecutor::Script agent = Agent(host, {.exit_code = 0}, milliseconds(0));
    agent.on_destroy_lines = {{OutputStream::kStderr, std::string("last words of ") + host}};
    executor.SetScript(host, agent);
  }
  RecordingPrinter printer;
  {
    RunSession session(executor, {{"a", 0}, {"b", 1}, {"c", 2}}, Options(), printer);
    std::atomic<bool> stop{false};
    ASSERT_EQ(session.Preflight(stop).size(), 3u);
  }
  for (const char* line : {"0:last words of a", "1:last words of b", "2:last words of c"})
    EXPECT_NE(std::find(printer.lines.begin(), printer.lines.end(), line), printer.lines.end()) << line;
}

TEST(RunSessionTest, PreflightReportsStartErrorsAndAgentsThatEndWithoutReply) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {.exit_code = 0}, milliseconds(0)));
  FakeExecutor::Script refused;
  refused.start_error = Error(ErrorCode::kUnavailable, "b", "connection refused");
  executor.SetScript("b", refused);
  FakeExecutor::Script missing;
  missing.lines = {{OutputStream::kStderr, "sh: 1: /opt/topolaunch: not found"}};
  missing.exit = {.exit_code = 127};
  executor.SetScript("c", missing);
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}, {"c", 2}}, Options(), printer);
  std::atomic<bool> stop{false};
  std::vector<NodePreflight> preflight = session.Preflight(stop);
  EXPECT_TRUE(preflight[0].reply);
  EXPECT_NE(preflight[1].failure.find("connection refused"), std::string::npos) << preflight[1].failure;
  EXPECT_NE(preflight[2].failure.find("exit 127"), std::string::npos) << preflight[2].failure;
  EXPECT_NE(preflight[2].failure.find("not found"), std::string::npos) << preflight[2].failure;
  session.Abort();
  EXPECT_TRUE(executor.stdin_closed("a"));
  EXPECT_EQ(executor.stdin_written("a"), FormatPreflightRequest(Options().preflight));  // never a launch message
}

TEST(RunSessionTest, PreflightTimesOutOnSilentAgents) {
  FakeExecutor executor;
  FakeExecutor::Script silent;
  silent.runs_until_stopped = true;
  executor.SetScript("a", silent);
  SessionOptions options = Options();
  options.preflight_timeout = milliseconds(100);
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}}, options, printer);
  std::atomic<bool> stop{false};
  std::vector<NodePreflight> preflight = session.Preflight(stop);
  EXPECT_NE(preflight[0].failure.find("no preflight reply within"), std::string::npos) << preflight[0].failure;
  session.Abort();
}

TEST(RunSessionTest, LaunchSendsEachNodeItsMessageAndReportsSuccess) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {.exit_code = 0}, milliseconds(30)));
  executor.SetScript("b", Agent("b", {.exit_code = 0}, milliseconds(10)));
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, Options(), printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  SessionReport report = session.Launch(Messages(2), stop);
  EXPECT_FALSE(report.first_failure);
  EXPECT_FALSE(report.interrupted);
  for (const NodeOutcome& node : report.nodes) {
    ASSERT_TRUE(node.exit);
    EXPECT_EQ(*node.exit, ExitInfo{.exit_code = 0});
    EXPECT_FALSE(node.stopped);
  }
  EXPECT_EQ(executor.stdin_written("b"), FormatPreflightRequest(Options().preflight) + FormatLaunchMessage(Messages(2)[1]));
  EXPECT_TRUE(executor.stopped().empty());
  EXPECT_EQ(report.nodes[1].tail.back(), "b training");
}

TEST(RunSessionTest, RunningAgentsGetHeartbeats) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {.exit_code = 0}, milliseconds(200)));
  SessionOptions options = Options();
  options.heartbeat = milliseconds(40);
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}}, options, printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  session.Launch(Messages(1), stop);
  std::string written = executor.stdin_written("a");
  std::string launch = FormatPreflightRequest(options.preflight) + FormatLaunchMessage(Messages(1)[0]);
  ASSERT_TRUE(written.starts_with(launch));
  std::string beats = written.substr(launch.size());
  EXPECT_GE(beats.size(), 2u) << "a 200 ms run with a 40 ms heartbeat";
  EXPECT_EQ(beats.find_first_not_of('\n'), std::string::npos);
}

TEST(RunSessionTest, OneNodeFailingStopsEveryOther) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {}, milliseconds(0), /*until_stopped=*/true));
  executor.SetScript("b", Agent("b", {.exit_code = 1}, milliseconds(20)));
  executor.SetScript("c", Agent("c", {}, milliseconds(0), /*until_stopped=*/true));
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}, {"c", 2}}, Options(), printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  SessionReport report = session.Launch(Messages(3), stop);
  ASSERT_TRUE(report.first_failure);
  EXPECT_EQ(*report.first_failure, 1u);
  EXPECT_FALSE(report.interrupted);
  EXPECT_TRUE(report.nodes[0].stopped);
  EXPECT_FALSE(report.nodes[1].stopped);
  EXPECT_TRUE(report.nodes[2].stopped);
  std::vector<std::string> stopped = executor.stopped();
  std::sort(stopped.begin(), stopped.end());
  EXPECT_EQ(stopped, (std::vector<std::string>{"a", "c"}));
}

// torch 1.13's log line for a failed worker, as torchrun writes it on stderr.
constexpr const char* kTorch113FailedLine =
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 3) local_rank: 1 (pid: 42) of binary: x";

// Nodes a and b (node ranks 0 and 1) through a preflight and a launch.
SessionReport RunTwoNodes(FakeExecutor& executor, FakeExecutor::Script a, FakeExecutor::Script b) {
  executor.SetScript("a", std::move(a));
  executor.SetScript("b", std::move(b));
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, Options(), printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  return session.Launch(Messages(2), stop);
}

// torch 1.13's torchrun logs the failed worker, then waits up to 300 s for
// the other nodes before exiting: the log line is the failure.
TEST(RunSessionTest, TorchrunsFailedWorkerLineStopsEveryNodeAtOnce) {
  FakeExecutor executor;
  FakeExecutor::Script b = Agent("b", {}, milliseconds(0), true);
  b.on_write_lines.push_back({OutputStream::kStderr, kTorch113FailedLine});
  auto started = std::chrono::steady_clock::now();
  SessionReport report = RunTwoNodes(executor, Agent("a", {}, milliseconds(0), true), b);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(5000));
  ASSERT_TRUE(report.first_failure);
  EXPECT_EQ(*report.first_failure, 1u);
  EXPECT_FALSE(report.interrupted);
  EXPECT_EQ(executor.stopped().size(), 2u);
  EXPECT_TRUE(report.nodes[0].stopped);
  EXPECT_FALSE(report.nodes[1].stopped) << "the failed node reports its own failure, not \"stopped\"";
  EXPECT_EQ(report.nodes[1].failure, "worker failed: local rank 1 exit code 3 (torchrun)");
}

// After its failed-worker line torchrun prints the root cause and the
// rank's last lines, then ends: the failed node is given that moment (the
// others are stopped at once), and what it printed is in its tail.
TEST(RunSessionTest, TheFailedNodeMayEndByItselfAfterItsFailedWorkerLine) {
  FakeExecutor executor;
  FakeExecutor::Script b = Agent("b", ExitInfo{.exit_code = 1}, milliseconds(150));
  b.on_write_lines.push_back({OutputStream::kStderr, kTorch113FailedLine});
  SessionReport report = RunTwoNodes(executor, Agent("a", {}, milliseconds(0), true), b);
  ASSERT_TRUE(report.first_failure);
  EXPECT_EQ(*report.first_failure, 1u);
  EXPECT_EQ(executor.stopped(), std::vector<std::string>{"a"}) << "the failed node ended by itself within the settle time";
  ASSERT_TRUE(report.nodes[1].exit);
  EXPECT_EQ(*report.nodes[1].exit, ExitInfo{.exit_code = 1});
  EXPECT_FALSE(report.nodes[1].stopped);
}

TEST(RunSessionTest, TorchrunsTorch2FailedWorkerLineIsRecognized) {
  FakeExecutor executor;
  FakeExecutor::Script b = Agent("b", {}, milliseconds(0), true);
  b.on_write_lines.push_back({OutputStream::kStderr,
                              "E1201 12:00:00.123000 4242 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
                              "failed (exitcode: 1) local_rank: 0 (pid: 4343) of binary: /usr/bin/python3"});
  SessionReport report = RunTwoNodes(executor, Agent("a", {}, milliseconds(0), true), b);
  ASSERT_TRUE(report.first_failure);
  EXPECT_EQ(report.nodes[1].failure, "worker failed: local rank 0 exit code 1 (torchrun)");
}

// A script may print anything, also torchrun's words: only torchrun's own
// logger line on stderr means a worker failed.
TEST(RunSessionTest, AScriptPrintingTorchrunsWordsDoesNotStopTheJob) {
  FakeExecutor executor;
  FakeExecutor::Script b = Agent("b", ExitInfo{.exit_code = 0}, milliseconds(50));
  b.on_write_lines.push_back({OutputStream::kStdout, kTorch113FailedLine});
  b.on_write_lines.push_back({OutputStream::kStderr, "worker says: failed (exitcode: 3) local_rank: 1 (pid: 42) of binary: x"});
  SessionReport report = RunTwoNodes(executor, Agent("a", ExitInfo{.exit_code = 0}, milliseconds(50)), b);
  EXPECT_FALSE(report.first_failure);
  EXPECT_TRUE(executor.stopped().empty());
  EXPECT_EQ(report.nodes[1].failure, "");
}

// The agent sends a rank's lines labelled (rank_lines.h): the printer gets
// the label apart from the text, the tail keeps "RANK: text", and a rank
// that prints torchrun's failed-worker line does not fail the node.
TEST(RunSessionTest, RankLinesArriveLabelledAndCannotPassForTorchrunsOwn) {
  FakeExecutor executor;
  FakeExecutor::Script b = Agent("b", ExitInfo{.exit_code = 0}, milliseconds(50));
  b.on_write_lines.push_back({OutputStream::kStdout, FormatRankLine({3, 1}, "loss 0.5")});
  b.on_write_lines.push_back({OutputStream::kStderr, FormatRankLine({3, 1}, kTorch113FailedLine)});
  executor.SetScript("a", Agent("a", ExitInfo{.exit_code = 0}, milliseconds(50)));
  executor.SetScript("b", b);
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, Options(), printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  SessionReport report = session.Launch(Messages(2), stop);
  EXPECT_FALSE(report.first_failure);
  EXPECT_EQ(report.nodes[1].failure, "");
  EXPECT_NE(std::find(printer.lines.begin(), printer.lines.end(), "1:3 loss 0.5"), printer.lines.end());
  EXPECT_NE(std::find(printer.lines.begin(), printer.lines.end(), "1:b training"), printer.lines.end());
  EXPECT_NE(std::find(report.nodes[1].tail.begin(), report.nodes[1].tail.end(), "3: loss 0.5"), report.nodes[1].tail.end());
}

// While agents have not answered, the session says which, about once a second.
TEST(RunSessionTest, PreflightReportsTheNodesStillWaitingAboutEverySecond) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {.exit_code = 0}, milliseconds(0)));
  FakeExecutor::Script silent;
  silent.runs_until_stopped = true;
  executor.SetScript("b", silent);
  SessionOptions options = Options();
  options.preflight_timeout = milliseconds(2600);
  std::vector<std::pair<std::vector<size_t>, milliseconds>> progress;
  options.preflight_progress = [&](const std::vector<size_t>& waiting, milliseconds waited) { progress.emplace_back(waiting, waited); };
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, options, printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  session.Abort();
  ASSERT_EQ(progress.size(), 2u);
  for (size_t i = 0; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i].first, std::vector<size_t>{1});
    EXPECT_GE(progress[i].second, milliseconds(1000 * static_cast<int>(i + 1)));
  }
}

TEST(RunSessionTest, StopFlagStopsEveryNode) {
  FakeExecutor executor;
  executor.SetScript("a", Agent("a", {}, milliseconds(0), true));
  executor.SetScript("b", Agent("b", {}, milliseconds(0), true));
  RecordingPrinter printer;
  RunSession session(executor, {{"a", 0}, {"b", 1}}, Options(), printer);
  std::atomic<bool> stop{false};
  session.Preflight(stop);
  std::thread raiser([&stop] {
    std::this_thread::sleep_for(milliseconds(50));
    stop = true;
  });
  SessionReport report = session.Launch(Messages(2), stop);
  raiser.join();
  EXPECT_TRUE(report.interrupted);
  EXPECT_FALSE(report.first_failure);
  EXPECT_EQ(executor.stopped().size(), 2u);
}

}  // namespace
}  // namespace topolaunch
