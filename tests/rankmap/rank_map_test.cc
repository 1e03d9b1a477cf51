#include "rankmap/rank_map.h"

#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "rankmap/ring_metrics.h"
#include "rankmap_test_util.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::HostNames;
using testing::ShuffleHostNames;
using testing::TopologyOf;

// Checks what the order promises on `groups`: each leaf group and each
// higher group contiguous, natural order inside a leaf group, and
// crossings = lower bound at every level.
void ExpectGoodOrder(const FabricGroups& groups, const std::vector<std::string>& order, const std::string& what) {
  for (int level = 1; level <= 1 + groups.group_levels; ++level) {
    std::vector<long> ids = GroupIds(groups, order, level);
    EXPECT_EQ(RingCrossings(ids), RingLowerBound(ids)) << what << " level " << level;
    std::set<long> closed;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0 && ids[i] != ids[i - 1]) closed.insert(ids[i - 1]);
      EXPECT_FALSE(closed.contains(ids[i])) << what << ": group " << ids[i] << " split at level " << level;
    }
  }
  std::vector<long> leaf = GroupIds(groups, order, 1);
  for (size_t i = 1; i < order.size(); ++i)
    if (leaf[i] == leaf[i - 1]) {
      EXPECT_TRUE(NaturalLess(order[i - 1], order[i])) << what << ": " << order[i - 1] << " before " << order[i];
    }
}

struct FabricCase {
  std::string name;
  testing::GeneratedFabric fabric;
  int expected_group_levels;
  int expected_spine_groups;  // in the whole fabric
};

std::vector<FabricCase> Fabrics() {
  return {
      {"two_level", testing::TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 4, .spines = 2}), 1, 1},
      {"oversubscribed", testing::TwoLevelFatTree({.leaves = 6, .hosts_per_leaf = 12, .spines = 1}), 1, 1},
      {"shuffled_names", testing::TwoLevelFatTree({.leaves = 5, .hosts_per_leaf = 7, .spines = 3, .shuffled_names = true}), 1, 1},
      {"three_level", testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 3, .hosts_per_leaf = 4}), 2, 3},
      {"rail_optimized", testing::RailOptimizedPod({.hosts = 6, .rails = 4, .spines = 2}), 1, 1},
      {"single_leaf", testing::TwoLevelFatTree({.leaves = 1, .hosts_per_leaf = 5, .spines = 1}), 1, 1},
  };
}

TEST(RankMapTest, GeneratedFabricsGiveContiguousOrder) {
  for (const FabricCase& c : Fabrics()) {
    Topology topology = TopologyOf(c.fabric);
    FabricGroups groups = ComputeFabricGroups(topology);
    EXPECT_EQ(groups.group_levels, c.expected_group_levels) << c.name;
    std::set<int> spine_groups;
    for (const auto& [host, place] : groups.hosts) spine_groups.insert(place.groups.at(0));
    EXPECT_EQ(static_cast<int>(spine_groups.size()), c.expected_spine_groups) << c.name;
    std::vector<std::string> hosts = HostNames(topology);
    std::reverse(hosts.begin(), hosts.end());
    Result<RankMap> map = ComputeRankMap(groups, hosts, false);
    ASSERT_TRUE(map.ok()) << c.name;
    EXPECT_EQ(map->order.size(), hosts.size());
    ExpectGoodOrder(groups, map->order, c.name);
  }
}

TEST(RankMapTest, ShuffledNamesFollowTheCablingNotTheNames) {
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 4, .spines = 2, .shuffled_names = true}));
  FabricGroups groups = ComputeFabricGroups(topology);
  Result<RankMap> map = ComputeRankMap(groups, HostNames(topology), false);
  ASSERT_TRUE(map.ok());
  PlanMetrics m = ComputeMetrics(&groups, map->order, HostNames(topology));
  EXPECT_EQ(m.ring_leaf_crossings, 4);
  EXPECT_EQ(m.ring_leaf_crossings_lower_bound, 4);
  EXPECT_GT(m.hostname_order_ring_leaf_crossings, 4);  // names scattered over leaves
}

// The property: over many generated fabrics, partial allocations and input
// orders, crossings equal the lower bound at every level and the order does
// not depend on the input order.
TEST(RankMapTest, PropertyCrossingsEqualLowerBoundOnGeneratedFabrics) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    testing::GeneratedFabric fabric =
        seed % 3 == 0 ? testing::ThreeLevelFatTree({.pods = pick(1, 4), .leaves_per_pod = pick(1, 4),
                                                    .hosts_per_leaf = pick(1, 6), .spines_per_pod = pick(1, 3), .cores = pick(1, 3)})
        : seed % 3 == 1 ? testing::TwoLevelFatTree({.leaves = pick(1, 8), .hosts_per_leaf = pick(1, 9), .spines = pick(1, 4),
                                                    .shuffled_names = seed % 2 == 0})
                        : testing::RailOptimizedPod({.hosts = pick(1, 8), .rails = pick(1, 4), .spines = pick(1, 2)});
    Topology topology = TopologyOf(fabric);
    if (seed % 4 == 0) ShuffleHostNames(topology, rng);
    FabricGroups groups = ComputeFabricGroups(topology);
    std::vector<std::string> hosts = HostNames(topology);
    std::shuffle(hosts.begin(), hosts.end(), rng);
    hosts.resize(pick(1, static_cast<int>(hosts.size())));  // partial allocation: uneven leaves
    Result<RankMap> first = ComputeRankMap(groups, hosts, false);
    ASSERT_TRUE(first.ok()) << "seed " << seed;
    ExpectGoodOrder(groups, first->order, "seed " + std::to_string(seed));
    std::shuffle(hosts.begin(), hosts.end(), rng);
    Result<RankMap> second = ComputeRankMap(groups, hosts, false);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(first->order, second->order) << "seed " << seed << ": order depends on input order";
  }
}

TEST(RankMapTest, UnknownHostsFailOrGoLast) {
  Topology topology = testing::TwoLevelTopology();
  FabricGroups groups = ComputeFabricGroups(topology);
  std::vector<std::string> hosts{"ghost2", "node03", "node01", "ghost10", "node04"};
  Result<RankMap> refused = ComputeRankMap(groups, hosts, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kBadInput);
  EXPECT_NE(refused.error().Message().find("ghost[2,10]"), std::string::npos) << refused.error().Message();
  Result<RankMap> allowed = ComputeRankMap(groups, hosts, true);
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->order, (std::vector<std::string>{"node01", "node03", "node04", "ghost2", "ghost10"}));
  EXPECT_EQ(allowed->unknown, (std::vector<std::string>{"ghost2", "ghost10"}));
  PlanMetrics m = ComputeMetrics(&groups, allowed->order, hosts);
  EXPECT_EQ(m.ring_leaf_crossings, m.ring_leaf_crossings_lower_bound);
  EXPECT_EQ(m.ring_leaf_crossings_lower_bound, 4);  // two leaves + two hosts sharing nothing
}

TEST(RankMapTest, DuplicateHostsAreAnError) {
  FabricGroups groups = ComputeFabricGroups(testing::TwoLevelTopology());
  Result<RankMap> map = ComputeRankMap(groups, {"node01", "node02", "node01"}, false);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.error().Message().find("node01"), std::string::npos);
}

TEST(RankMapTest, ThreeLevelSampleKeepsPodsTogether) {
  Topology topology = testing::ThreeLevelTopology();
  FabricGroups groups = ComputeFabricGroups(topology);
  std::vector<std::string> hosts{"gpu08", "gpu01", "gpu05", "gpu03", "gpu02", "gpu07", "gpu04", "gpu06"};
  Result<RankMap> map = ComputeRankMap(groups, hosts, false);
  ASSERT_TRUE(map.ok());
  ExpectGoodOrder(groups, map->order, "ThreeLevelTopology");
  PlanMetrics m = ComputeMetrics(&groups, map->order, hosts);
  ASSERT_GE(m.levels.size(), 2u);
  EXPECT_EQ(m.levels[1].name, "spine_group");
  EXPECT_EQ(m.levels[1].crossings, m.levels[1].lower_bound);
}

TEST(RankMapTest, MultiRailHostsGroupByTheirLeafSet) {
  Topology topology = testing::MultiRailTopology();
  FabricGroups groups = ComputeFabricGroups(topology);
  Result<RankMap> map = ComputeRankMap(groups, HostNames(topology), false);
  ASSERT_TRUE(map.ok());
  ExpectGoodOrder(groups, map->order, "MultiRailTopology");
  std::vector<Rail> rails = DescribeRails(groups, map->order);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].devices, (std::vector<std::string>{"mlx5_0"}));
  EXPECT_EQ(rails[0].leaves.size(), 2u);  // one rail-0 leaf per scalable unit
}

}  // namespace
}  // namespace topolaunch
