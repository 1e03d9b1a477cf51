#include "rankmap/node_choice.h"

#include <random>
#include <set>

#include <gtest/gtest.h>

#include "rankmap/ring_metrics.h"
#include "rankmap_test_util.h"

namespace topolaunch {
namespace {

using testing::HostNames;
using testing::TopologyOf;

int LeavesUsed(const FabricGroups& groups, const std::vector<std::string>& hosts) {
  std::set<long> ids;
  for (long id : GroupIds(groups, hosts, 1)) ids.insert(id);
  return static_cast<int>(ids.size());
}

int SpineGroupsUsed(const FabricGroups& groups, const std::vector<std::string>& hosts) {
  std::set<long> ids;
  for (long id : GroupIds(groups, hosts, 2)) ids.insert(id);
  return static_cast<int>(ids.size());
}

struct ChoiceCase {
  std::string name;
  testing::GeneratedFabric fabric;
  int count;
  int leaves;         // fewest leaves possible
  int spine_groups;   // fewest spine groups with that many leaves
};

TEST(NodeChoiceTest, FewestLeavesThenFewestSpineGroups) {
  std::vector<ChoiceCase> cases = {
      {"one_leaf_enough", testing::TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 8, .spines = 2}), 8, 1, 1},
      {"two_leaves", testing::TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 8, .spines = 2}), 9, 2, 1},
      {"whole_pod", testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 2, .hosts_per_leaf = 4}), 8, 2, 1},
      {"in_one_pod", testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 3, .hosts_per_leaf = 4}), 6, 2, 1},
      {"two_pods", testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 2, .hosts_per_leaf = 4}), 12, 3, 2},
      {"everything", testing::TwoLevelFatTree({.leaves = 3, .hosts_per_leaf = 3, .spines = 1}), 9, 3, 1},
  };
  for (const ChoiceCase& c : cases) {
    Topology topology = TopologyOf(c.fabric);
    FabricGroups groups = ComputeFabricGroups(topology);
    Result<std::vector<std::string>> chosen = ChooseNodes(groups, HostNames(topology), c.count);
    ASSERT_TRUE(chosen.ok()) << c.name;
    EXPECT_EQ(static_cast<int>(chosen->size()), c.count) << c.name;
    EXPECT_EQ(LeavesUsed(groups, *chosen), c.leaves) << c.name;
    EXPECT_EQ(SpineGroupsUsed(groups, *chosen), c.spine_groups) << c.name;
  }
}

TEST(NodeChoiceTest, PrefersFullLeavesOverPartlyUsedOnes) {
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 3, .hosts_per_leaf = 4, .spines = 1}));
  FabricGroups groups = ComputeFabricGroups(topology);
  // Pool: leaf01 has 2 free hosts, leaf02 all 4, leaf03 3.
  std::vector<std::string> pool{"node01", "node02", "node05", "node06", "node07", "node08", "node09", "node10", "node11"};
  Result<std::vector<std::string>> chosen = ChooseNodes(groups, pool, 4);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(*chosen, (std::vector<std::string>{"node05", "node06", "node07", "node08"}));
  Result<std::vector<std::string>> five = ChooseNodes(groups, pool, 5);
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(LeavesUsed(groups, *five), 2);
}

TEST(NodeChoiceTest, DeterministicWhateverThePoolOrder) {
  Topology topology = TopologyOf(testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 3, .hosts_per_leaf = 3}));
  FabricGroups groups = ComputeFabricGroups(topology);
  std::vector<std::string> pool = HostNames(topology);
  std::mt19937 rng(7);
  Result<std::vector<std::string>> first = ChooseNodes(groups, pool, 10);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(pool.begin(), pool.end(), rng);
    Result<std::vector<std::string>> again = ChooseNodes(groups, pool, 10);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *first);
  }
}

TEST(NodeChoiceTest, TooFewHostsIsBadUsage) {
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 2, .spines = 1}));
  FabricGroups groups = ComputeFabricGroups(topology);
  Result<std::vector<std::string>> chosen = ChooseNodes(groups, HostNames(topology), 5);
  ASSERT_FALSE(chosen.ok());
  EXPECT_EQ(chosen.error().code, ErrorCode::kBadUsage);
  EXPECT_NE(chosen.error().Message().find("only 4"), std::string::npos);
}

}  // namespace
}  // namespace topolaunch
