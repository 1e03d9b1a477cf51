#include "core/deadline_watchdog.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(DeadlineWatchdog, WorkDoneInTimeIsNeverLate) {
  std::atomic<int> late{0};
  {
    DeadlineWatchdog watchdog(Clock::now() + 300ms, 50ms, nullptr, [&] { ++late; });
    std::this_thread::sleep_for(100ms);
    watchdog.Disarm();
  }
  std::this_thread::sleep_for(300ms);  // past the deadline: still nothing
  EXPECT_EQ(late, 0);
}

TEST(DeadlineWatchdog, WorkPastTheDeadlineIsLateOnceAtTheDeadline) {
  std::atomic<int> late{0};
  std::atomic<Clock::rep> late_at{0};
  Clock::time_point start = Clock::now();
  {
    DeadlineWatchdog watchdog(start + 200ms, 1s, nullptr, [&] {
      late_at = Clock::now().time_since_epoch().count();
      ++late;
    });
    std::this_thread::sleep_for(600ms);
  }
  ASSERT_EQ(late, 1);
  Clock::duration after = Clock::duration(late_at.load()) - start.time_since_epoch();
  EXPECT_GE(after, 200ms);
  EXPECT_LT(after, 550ms);  // at the deadline, not at a tick or at the end
}

TEST(DeadlineWatchdog, TicksWithTheTimeSoFarUntilDisarmed) {
  std::mutex mutex;
  std::vector<std::chrono::milliseconds> ticks;
  DeadlineWatchdog watchdog(Clock::now() + 60s, 100ms, [&](std::chrono::milliseconds elapsed) {
    std::lock_guard lock(mutex);
    ticks.push_back(elapsed);
  }, nullptr);
  std::this_thread::sleep_for(450ms);
  watchdog.Disarm();
  std::lock_guard lock(mutex);
  size_t seen = ticks.size();
  ASSERT_GE(seen, 3u);
  EXPECT_LE(seen, 5u);
  for (size_t i = 0; i < ticks.size(); ++i) EXPECT_EQ(ticks[i], 100ms * static_cast<int>(i + 1)) << "tick " << i;
  std::this_thread::sleep_for(250ms);
  EXPECT_EQ(ticks.size(), seen) << "a tick after Disarm";
}

TEST(DeadlineWatchdog, DisarmDoesNotWaitForTheDeadline) {
  Clock::time_point start = Clock::now();
  { DeadlineWatchdog watchdog(start + 60s, 1s, [](std::chrono::milliseconds) {}, [] {}); }
  EXPECT_LT(Clock::now() - start, 1s);
}

}  // namespace
}  // namespace topolaunch
