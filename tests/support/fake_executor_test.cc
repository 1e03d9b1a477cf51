// FakeExecutor's scripts for stdin: output on the first write, commands that
// wait for a write, timed ends, and what was written and closed.
#include "support/fake_executor.h"

#include <gtest/gtest.h>

#include "support/launch_printers.h"

namespace topolaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::FakeExecutor;

struct Seen {
  std::vector<std::string> lines;
  OutputSink Sink() {
    return [this](size_t i, OutputStream s, std::string_view l) {
      lines.push_back(std::to_string(i) + (s == OutputStream::kStdout ? " out " : " err ") + std::string(l));
    };
  }
};

LaunchRequest OpenStdin(std::string host, std::string stdin_data = "") {
  LaunchRequest request{std::move(host), {{"agent"}}, std::move(stdin_data)};
  request.close_stdin = false;
  return request;
}

TEST(FakeExecutor, AnAgentWaitsForItsWriteThenRunsAndPrints) {
  FakeExecutor fake;
  FakeExecutor::Script agent;
  agent.lines = {{OutputStream::kStdout, "ready"}};
  agent.on_write_lines = {{OutputStream::kStdout, "launched"}, {OutputStream::kStderr, "warn"}};
  agent.wait_for_write = true;
  agent.run_time = 100ms;
  agent.exit = ExitInfo{.exit_code = 3};
  fake.SetScript("n1", agent);
  std::vector<LaunchRequest> requests = {OpenStdin("n1", "hello\n")};
  Seen seen;
  std::vector<StartResult> started = fake.StartAll(requests, seen.Sink());
  ASSERT_TRUE(started[0].ok());
  RunningCommand& command = **started[0];
  EXPECT_EQ(command.Wait(150ms), std::nullopt);  // no write yet: run_time has not begun
  EXPECT_EQ(seen.lines, std::vector<std::string>{"0 out ready"});
  Clock::time_point written = Clock::now();
  ASSERT_TRUE(command.WriteStdin("launch 1\n").ok());
  EXPECT_EQ(seen.lines, (std::vector<std::string>{"0 out ready", "0 out launched", "0 err warn"}));
  ASSERT_TRUE(command.WriteStdin("more\n").ok());
  EXPECT_EQ(seen.lines.size(), 3u);  // only the first write prints
  EXPECT_EQ(command.Wait(10ms), std::nullopt);
  EXPECT_EQ(command.Wait(5s), ExitInfo{.exit_code = 3});
  double ran = std::chrono::duration<double>(Clock::now() - written).count();
  EXPECT_GE(ran, 0.09);
  EXPECT_LT(ran, 2.0);
  EXPECT_FALSE(command.WriteStdin("late\n").ok());
  EXPECT_EQ(fake.stdin_written("n1"), "hello\nlaunch 1\nmore\n");
  EXPECT_FALSE(fake.stdin_closed("n1"));
  EXPECT_TRUE(fake.stopped().empty());
}

TEST(FakeExecutor, CloseStdinEndsAWaitingOrLongRunningCommandWithExitZero) {
  FakeExecutor fake;
  FakeExecutor::Script waiting;
  waiting.wait_for_write = true;
  waiting.exit = ExitInfo{.exit_code = 5};
  FakeExecutor::Script endless;
  endless.runs_until_stopped = true;
  fake.SetScript("n1", waiting);
  fake.SetScript("n2", endless);
  std::vector<LaunchRequest> requests = {OpenStdin("n1"), OpenStdin("n2")};
  std::vector<StartResult> started = fake.StartAll(requests, nullptr);
  ASSERT_TRUE(started[0].ok() && started[1].ok());
  ASSERT_TRUE((*started[1])->WriteStdin("go\n").ok());
  EXPECT_EQ((*started[0])->Wait(0ms), std::nullopt);
  EXPECT_EQ((*started[1])->Wait(50ms), std::nullopt);
  for (StartResult& s : started) {
    (*s)->CloseStdin();
    (*s)->CloseStdin();  // idempotent
    EXPECT_EQ((*s)->Wait(0ms), ExitInfo{.exit_code = 0});
    Status late = (*s)->WriteStdin("x");
    ASSERT_FALSE(late.ok());
    EXPECT_EQ(late.error().code, ErrorCode::kUnavailable);
  }
  EXPECT_TRUE(fake.stdin_closed("n1") && fake.stdin_closed("n2"));
  EXPECT_EQ(fake.stdin_written("n2"), "go\n");
  EXPECT_EQ((*started[1])->Stop(0ms), ExitInfo{.exit_code = 0});  // already ended: no stop
  EXPECT_TRUE(fake.stopped().empty());
}

TEST(FakeExecutor, StopEndsARunningTimedCommandAndCloseStdinRequestsAreClosed) {
  FakeExecutor fake;
  FakeExecutor::Script slow;
  slow.run_time = 10s;
  fake.SetScript("n1", slow);
  FakeExecutor::Script waiting;
  waiting.wait_for_write = true;
  fake.SetScript("n2", waiting);
  // n2's request closes stdin at the start: an agent told "do not start".
  std::vector<LaunchRequest> requests = {OpenStdin("n1"), {"n2", {{"agent"}}, "msg\n"}};
  std::vector<StartResult> started = fake.StartAll(requests, nullptr);
  ASSERT_TRUE(started[0].ok() && started[1].ok());
  EXPECT_EQ((*started[0])->Wait(20ms), std::nullopt);
  ExitInfo stopped = (*started[0])->Stop(0ms);
  EXPECT_EQ(stopped.signal, "TERM");
  EXPECT_EQ((*started[0])->Wait(0ms), stopped);
  EXPECT_EQ(fake.stopped(), std::vector<std::string>{"n1"});
  EXPECT_EQ((*started[1])->Wait(0ms), ExitInfo{.exit_code = 0});
  EXPECT_FALSE((*started[1])->WriteStdin("x").ok());
  EXPECT_TRUE(fake.stdin_closed("n2"));
  EXPECT_EQ(fake.stdin_written("n2"), "msg\n");
  EXPECT_FALSE(fake.stdin_closed("n1"));
  EXPECT_EQ(fake.stdin_written("n3"), "");
}

}  // namespace
}  // namespace topolaunch
