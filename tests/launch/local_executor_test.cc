// LocalExecutor against real children: output, stdin, env and cwd, exec
// failures, and stop semantics (SIGTERM to the group, SIGKILL after grace).
#include "launch/local_executor.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "support/launch_printers.h"

#include "support/subprocess.h"

namespace topolaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Collected {
  std::mutex mutex;
  std::vector<std::string> out, err;
  OutputSink Sink() {
    return [this](size_t, OutputStream stream, std::string_view line) {
      std::lock_guard lock(mutex);
      (stream == OutputStream::kStdout ? out : err).emplace_back(line);
    };
  }
};

std::unique_ptr<RunningCommand> StartOne(LaunchRequest request, Collected& collected) {
  LocalExecutor executor;
  std::vector<StartResult> started = executor.StartAll({&request, 1}, collected.Sink());
  EXPECT_EQ(started.size(), 1u);
  EXPECT_TRUE(started[0].ok()) << (started[0].ok() ? "" : started[0].error().Message());
  return started[0].ok() ? std::move(started[0].value()) : nullptr;
}

TEST(LocalExecutor, StreamsLinesAndReturnsTheExitStatus) {
  Collected got;
  auto command = StartOne({"", {{"sh", "-c", "echo out1; echo err1 >&2; echo out2; printf tail; exit 3"}}}, got);
  ASSERT_TRUE(command);
  std::optional<ExitInfo> info = command->Wait(10s);
  ASSERT_TRUE(info);
  EXPECT_EQ(*info, ExitInfo{.exit_code = 3});
  EXPECT_EQ(got.out, (std::vector<std::string>{"out1", "out2", "tail"}));
  EXPECT_EQ(got.err, (std::vector<std::string>{"err1"}));
}

TEST(LocalExecutor, FeedsStdinEnvAndCwd) {
  Collected got;
  Command command{{"sh", "-c", "cat; echo \"$TL_VALUE\"; pwd"}, {{"TL_VALUE", "it's $x; y"}}, "/"};
  auto running = StartOne({"", command, "line 1\nline 2\n"}, got);
  ASSERT_TRUE(running);
  ASSERT_EQ(running->Wait(10s), ExitInfo{.exit_code = 0});
  EXPECT_EQ(got.out, (std::vector<std::string>{"line 1", "line 2", "it's $x; y", "/"}));
}

// What srun must not inherit (srun_step_env.h) is removed from the child's
// environment; what the command sets still wins.
TEST(LocalExecutor, UnsetNamesLeaveTheInheritedEnvironment) {
  setenv("TL_UNSET_ME", "inherited", 1);
  setenv("TL_KEEP_ME", "kept", 1);
  Collected got;
  Command command{{"sh", "-c", "echo \"${TL_UNSET_ME-gone} $TL_KEEP_ME $TL_SET\""}, {{"TL_SET", "set"}}, "", {"TL_UNSET_ME", "TL_SET"}};
  auto running = StartOne({"", command}, got);
  ASSERT_TRUE(running);
  ASSERT_EQ(running->Wait(10s), ExitInfo{.exit_code = 0});
  unsetenv("TL_UNSET_ME");
  unsetenv("TL_KEEP_ME");
  EXPECT_EQ(got.out, (std::vector<std::string>{"gone kept set"}));
}

TEST(LocalExecutor, ExecFailureIsAStartError) {
  LocalExecutor executor;
  std::vector<LaunchRequest> requests = {{"", {{"/nonexistent/topolaunch-prog"}}}, {"", {{"true"}, {}, "/nonexistent-dir"}}};
  std::vector<StartResult> started = executor.StartAll(requests, nullptr);
  ASSERT_EQ(started.size(), 2u);
  ASSERT_FALSE(started[0].ok());
  EXPECT_EQ(started[0].error().code, ErrorCode::kUnavailable);
  EXPECT_NE(started[0].error().Message().find("No such file"), std::string::npos) << started[0].error().Message();
  ASSERT_FALSE(started[1].ok());
  EXPECT_NE(started[1].error().Message().find("/nonexistent-dir"), std::string::npos);
}

TEST(LocalExecutor, WaitTimesOutWhileRunningAndStdinCanStayOpen) {
  Collected got;
  LaunchRequest request{"", {{"cat"}}, "hello\n"};
  request.close_stdin = false;
  auto running = StartOne(request, got);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->Wait(300ms), std::nullopt);  // cat waits for more input
  ExitInfo info = running->Stop(2s);
  EXPECT_EQ(info.signal, "TERM");
  EXPECT_EQ(got.out, std::vector<std::string>{"hello"});
}

// Waits until `collected` holds `count` stdout lines (or 10 s pass).
std::vector<std::string> WaitForLines(Collected& collected, size_t count) {
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(collected.mutex);
      if (collected.out.size() >= count) return collected.out;
    }
    std::this_thread::sleep_for(20ms);
  }
  std::lock_guard lock(collected.mutex);
  return collected.out;
}

TEST(LocalExecutor, WriteStdinFeedsMoreInputInOrderAndCloseStdinEndsIt) {
  Collected got;
  LaunchRequest request{"", {{"cat"}}, "first\n"};
  request.close_stdin = false;
  auto running = StartOne(request, got);
  ASSERT_TRUE(running);
  EXPECT_EQ(WaitForLines(got, 1), std::vector<std::string>{"first"});
  ASSERT_TRUE(running->WriteStdin("sec").ok());
  ASSERT_TRUE(running->WriteStdin("ond\nthird\n").ok());
  EXPECT_EQ(WaitForLines(got, 3), (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_EQ(running->Wait(200ms), std::nullopt);  // stdin still open
  ASSERT_TRUE(running->WriteStdin("last, unterminated").ok());
  running->CloseStdin();
  running->CloseStdin();  // idempotent
  EXPECT_EQ(running->Wait(10s), ExitInfo{.exit_code = 0});
  EXPECT_EQ(got.out, (std::vector<std::string>{"first", "second", "third", "last, unterminated"}));
}

TEST(LocalExecutor, WriteStdinFailsOnceStdinIsClosedOrTheCommandEnded) {
  Collected got;
  LaunchRequest open{"", {{"cat"}}};
  open.close_stdin = false;
  auto cat = StartOne(open, got);
  ASSERT_TRUE(cat);
  cat->CloseStdin();
  Status after_close = cat->WriteStdin("x\n");
  ASSERT_FALSE(after_close.ok());
  EXPECT_EQ(after_close.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(cat->Wait(10s), ExitInfo{.exit_code = 0});
  EXPECT_TRUE(got.out.empty());

  LaunchRequest ended{"", {{"true"}}};
  ended.close_stdin = false;
  auto done = StartOne(ended, got);
  ASSERT_TRUE(done);
  ASSERT_EQ(done->Wait(10s), ExitInfo{.exit_code = 0});
  Status after_end = done->WriteStdin("x\n");
  ASSERT_FALSE(after_end.ok());
  EXPECT_EQ(after_end.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(after_end.error().Message().find("true: has ended"), std::string::npos) << after_end.error().Message();

  auto closed_by_request = StartOne({"", {{"cat"}}, "x\n"}, got);  // close_stdin = true
  ASSERT_TRUE(closed_by_request);
  EXPECT_FALSE(closed_by_request->WriteStdin("y\n").ok());
  EXPECT_EQ(closed_by_request->Wait(10s), ExitInfo{.exit_code = 0});
}

TEST(LocalExecutor, ALargeWriteToASlowReaderDoesNotBlockTheCaller) {
  Collected got;
  // Reads nothing for half a second: 1 MiB cannot fit in the pipe.
  LaunchRequest request{"", {{"sh", "-c", "sleep 0.5; wc -c"}}};
  request.close_stdin = false;
  auto running = StartOne(request, got);
  ASSERT_TRUE(running);
  std::string chunk(1 << 20, 'x');
  Clock::time_point start = Clock::now();
  ASSERT_TRUE(running->WriteStdin(chunk).ok());
  running->CloseStdin();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(seconds, 0.1);
  ASSERT_EQ(running->Wait(10s), ExitInfo{.exit_code = 0});
  ASSERT_EQ(got.out.size(), 1u);
  EXPECT_EQ(std::stol(got.out[0]), 1 << 20);  // every byte arrived, EOF after the last
}

TEST(LocalExecutor, StopEscalatesToKillAfterTheGracePeriod) {
  Collected got;
  auto running = StartOne({"", {{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}}}, got);
  ASSERT_TRUE(running);
  for (int i = 0; i < 100 && got.out.empty(); ++i) std::this_thread::sleep_for(20ms);
  Clock::time_point start = Clock::now();
  ExitInfo info = running->Stop(400ms);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(info.signal, "KILL");
  EXPECT_GE(seconds, 0.35);
  EXPECT_LT(seconds, 3.0);
}

TEST(LocalExecutor, StopReachesTheWholeProcessGroup) {
  Collected got;
  auto running = StartOne({"", {{"sh", "-c", "sleep 1000 & echo $!; wait"}}}, got);
  ASSERT_TRUE(running);
  for (int i = 0; i < 100; ++i) {
    {
      std::lock_guard lock(got.mutex);
      if (!got.out.empty()) break;
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(got.out.size(), 1u);
  pid_t grandchild = std::stoi(got.out[0]);
  EXPECT_EQ(running->Stop(2s).signal, "TERM");
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !std::filesystem::exists("/proc/" + std::to_string(grandchild));
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "sleep " << grandchild << " survived";
}

TEST(LocalExecutor, ManyAtOnceKeepTheirOwnOutput) {
  LocalExecutor executor;
  std::vector<LaunchRequest> requests;
  for (int i = 0; i < 16; ++i) requests.push_back({"", {{"sh", "-c", "for k in 1 2 3; do echo " + std::to_string(i) + "; done"}}});
  std::vector<std::vector<std::string>> lines(requests.size());
  std::vector<StartResult> started = executor.StartAll(requests, [&](size_t index, OutputStream, std::string_view line) {
    lines[index].emplace_back(line);  // the executor serializes sink calls
  });
  for (size_t i = 0; i < started.size(); ++i) {
    ASSERT_TRUE(started[i].ok());
    EXPECT_EQ((*started[i])->Wait(10s), ExitInfo{.exit_code = 0});
  }
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i], std::vector<std::string>(3, std::to_string(i)));
}

TEST(ShellQuote, RoundTripsThroughARealShell) {
  std::vector<std::string> args = {"plain", "two words", "it's", "'", "\"", "$HOME", "$(id)", "`id`", "a;b", "x\ny",
                                   "\\", "*", "~", "", " lead", "trail ", "--lr=3e-4", "%s", "tab\there", "é"};
  Command command{{"printf", "%s\\0"}, {}, ""};
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  Result<std::string> line = RenderShellCommand(command);
  ASSERT_TRUE(line.ok());
  testing::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", *line};
  testing::ProcessResult result = testing::RunProcess(spec);
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  std::string expected;
  for (const std::string& a : args) expected += a + '\0';
  EXPECT_EQ(result.out, expected);
}

}  // namespace
}  // namespace topolaunch
