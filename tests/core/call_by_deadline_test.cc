#include "core/call_by_deadline.h"

#include <future>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(CallByDeadline, AnAnswerInTimeComesBack) {
  std::optional<std::string> answer = CallByDeadline<std::string>([] { return std::string("ok"); }, Clock::now() + 10s);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(*answer, "ok");
}

TEST(CallByDeadline, WorkThatDoesNotAnswerEndsAtTheDeadline) {
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  Clock::time_point start = Clock::now();
  std::optional<int> answer = CallByDeadline<int>(
      [released] {
        released.wait();
        return 1;
      },
      start + 200ms);
  EXPECT_FALSE(answer.has_value());
  EXPECT_GE(Clock::now() - start, 200ms);
  EXPECT_LT(Clock::now() - start, 5s);
  release->set_value();  // the thread left behind finishes
}

}  // namespace
}  // namespace topolaunch
