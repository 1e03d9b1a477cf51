// CallInChildProcess against real forks: answers of any size come back, a
// crash or an endless loop in the child becomes an error, and no child is
// left behind (reaped, not a zombie).
#include "discover/contained_call.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using std::chrono::milliseconds;

// True when this process has no child left (running or zombie).
bool NoChildLeft() { return waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD; }

TEST(ContainedCall, ReturnsTheChildsAnswerWhateverItsSize) {
  for (size_t size : {size_t{0}, size_t{5}, size_t{3} << 20}) {
    Result<std::string> answer = CallInChildProcess([size] { return std::string(size, 'x'); }, milliseconds(20'000));
    ASSERT_TRUE(answer.ok()) << answer.error().Message();
    EXPECT_EQ(answer->size(), size);
  }
  EXPECT_TRUE(NoChildLeft());
}

TEST(ContainedCall, ACrashIsAnErrorWithTheSignalAndTheLastWordsOnStderr) {
  Result<std::string> answer = CallInChildProcess(
      []() -> std::string {
        std::fputs("first line\nlibfoo.c:12: Assertion `x' failed.\n", stderr);
        std::fflush(stderr);
        raise(SIGSEGV);
        return "never";
      },
      milliseconds(20'000));
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kInternal);
  std::string what = answer.error().problems.front().what;
  EXPECT_NE(what.find("signal 11"), std::string::npos) << what;
  EXPECT_NE(what.find("libfoo.c:12: Assertion `x' failed."), std::string::npos) << what;
  EXPECT_EQ(what.find("first line"), std::string::npos) << "only the last line: " << what;
  EXPECT_TRUE(NoChildLeft());
}

TEST(ContainedCall, AnExitWithoutAnswerIsAnError) {
  Result<std::string> answer = CallInChildProcess([]() -> std::string { _exit(0); }, milliseconds(20'000));
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().problems.front().what.find("exited with status 0 without an answer"), std::string::npos)
      << answer.error().Message();
  EXPECT_TRUE(NoChildLeft());
}

TEST(ContainedCall, AChildPastItsTimeIsKilledAndReaped) {
  auto start = std::chrono::steady_clock::now();
  Result<std::string> answer = CallInChildProcess(
      []() -> std::string {
        for (;;) pause();
      },
      milliseconds(300));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kTimeout) << answer.error().Message();
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_TRUE(NoChildLeft());
}

}  // namespace
}  // namespace topolaunch
