#include "launch/connect_back_admission.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<WaitingConnection> Waiting(const std::vector<std::pair<std::string, int>>& sources_and_ages) {
  Clock::time_point now = Clock::now();
  std::vector<WaitingConnection> waiting;
  for (const auto& [source, age_ms] : sources_and_ages) waiting.push_back({source, now - std::chrono::milliseconds(age_ms)});
  return waiting;
}

TEST(ConnectionToEvict, RoomMeansNobodyGivesWay) {
  EXPECT_FALSE(ConnectionToEvict({}, "10.0.0.1", {2, 4}));
  EXPECT_FALSE(ConnectionToEvict(Waiting({{"10.0.0.1", 5}, {"10.0.0.2", 9}}), "10.0.0.1", {2, 4}));
}

TEST(ConnectionToEvict, ASourceAtItsLimitPushesOutOnlyItsOwnOldest) {
  std::vector<WaitingConnection> waiting = Waiting({{"10.0.0.9", 900}, {"10.0.0.1", 50}, {"10.0.0.1", 80}, {"10.0.0.1", 10}});
  std::optional<size_t> evict = ConnectionToEvict(waiting, "10.0.0.1", {3, 100});
  ASSERT_TRUE(evict);
  EXPECT_EQ(*evict, 2u) << "the oldest of 10.0.0.1, not the older one of 10.0.0.9";
}

TEST(ConnectionToEvict, EveryoneAtTheLimitPushesOutTheOldestOfAll) {
  std::vector<WaitingConnection> waiting = Waiting({{"a", 10}, {"b", 700}, {"c", 300}});
  std::optional<size_t> evict = ConnectionToEvict(waiting, "d", {8, 3});
  ASSERT_TRUE(evict);
  EXPECT_EQ(*evict, 1u);
}

}  // namespace
}  // namespace topolaunch
