// NVLink domains as the innermost tier: each domain's hosts consecutive,
// domains in the InfiniBand order, both levels' ring crossings at their
// lower bound, on racks cabled the way GB200 NVL72 sites cable them and
// the ways they should not.
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "rankmap/node_choice.h"
#include "rankmap/plan_builder.h"
#include "rankmap/rank_map.h"
#include "rankmap/ring_metrics.h"
#include "rankmap_test_util.h"
#include "support/nvlink_racks.h"

namespace topolaunch {
namespace {

using testing::HostNames;
using testing::PutInRacks;
using testing::TopologyOf;

// Hosts of each leaf, natural order, leaves in GUID order.
std::vector<std::vector<std::string>> HostsByLeaf(const Topology& topology) {
  FabricGroups groups = ComputeFabricGroups(topology);
  std::map<int, std::vector<std::string>> by_leaf;
  for (const std::string& host : NaturalSorted(HostNames(topology))) by_leaf[groups.hosts.at(host).leaf_group].push_back(host);
  std::vector<std::vector<std::string>> out;
  for (auto& [id, hosts] : by_leaf) out.push_back(std::move(hosts));
  return out;
}

// Every domain's hosts and every leaf group's hosts each form one run of
// the ring (the first and last run may join across the wrap).
void ExpectContiguous(const std::vector<long>& ids, const std::string& what) {
  std::set<long> closed;
  size_t start = 0;  // skip a run that continues across the wrap
  while (start < ids.size() && ids[start] == ids.back()) ++start;
  if (start == ids.size()) return;
  for (size_t k = 0; k < ids.size(); ++k) {
    size_t i = (start + k) % ids.size(), prev = (start + k + ids.size() - 1) % ids.size();
    if (k > 0 && ids[i] != ids[prev]) closed.insert(ids[prev]);
    EXPECT_FALSE(closed.contains(ids[i])) << what << ": group " << ids[i] << " is split";
  }
}

struct Checked {
  RankMap map;
  PlanMetrics metrics;
};

Checked PlanAndCheck(const Topology& topology, const std::string& what) {
  FabricGroups groups = ComputeFabricGroups(topology);
  std::vector<std::string> hosts = HostNames(topology);
  std::reverse(hosts.begin(), hosts.end());
  Result<RankMap> map = ComputeRankMap(groups, hosts, false);
  EXPECT_TRUE(map.ok()) << what;
  if (!map.ok()) return {};
  PlanMetrics m = ComputeMetrics(&groups, map->order, hosts);
  EXPECT_TRUE(m.nvlink_domain.has_value()) << what;
  if (!m.nvlink_domain) return {*map, m};
  EXPECT_EQ(m.nvlink_domain->crossings, m.nvlink_domain->lower_bound) << what << ": NVLink domain crossings";
  for (const LevelCrossings& level : m.levels)
    EXPECT_EQ(level.crossings, level.lower_bound) << what << ": " << level.name << " crossings";
  ExpectContiguous(NvlinkDomainIds(groups.nvlink, map->order), what + " domains");
  ExpectContiguous(GroupIds(groups, map->order, 1), what + " leaves");
  std::mt19937 rng(7);
  std::shuffle(hosts.begin(), hosts.end(), rng);
  Result<RankMap> again = ComputeRankMap(groups, hosts, false);
  EXPECT_TRUE(again.ok() && again->order == map->order) << what << ": the order depends on the input order";
  return {*map, m};
}

TEST(NvlinkRankMap, TwoRacksOnTwoLeavesWithNamesThatDoNotFollowTheCabling) {
  // Rack r is cabled to leaf r, as sites usually cable an NVL72 rack; the
  // names are scattered over both.
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 18, .spines = 2, .shuffled_names = true}));
  std::map<std::string, int> racks;
  std::vector<std::vector<std::string>> leaves = HostsByLeaf(topology);
  for (size_t l = 0; l < leaves.size(); ++l)
    for (const std::string& host : leaves[l]) racks[host] = static_cast<int>(l);
  PutInRacks(topology, racks);
  Checked c = PlanAndCheck(topology, "two racks");
  ASSERT_TRUE(c.metrics.nvlink_domain);
  EXPECT_EQ(c.metrics.nvlink_domain->crossings, 2);
  EXPECT_GT(c.metrics.nvlink_domain->hostname_order_crossings, 2);
  EXPECT_EQ(c.metrics.ring_leaf_crossings, 2);
}

TEST(NvlinkRankMap, RacksCabledAcrossBothLeavesStayWholeAtBothBounds) {
  // Each rack has 9 trays on each leaf: ordering by leaf alone would split
  // both racks; the domains sit on the border of the two leaves instead.
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 18, .spines = 2}));
  std::map<std::string, int> racks;
  std::vector<std::vector<std::string>> leaves = HostsByLeaf(topology);
  for (const std::vector<std::string>& leaf : leaves)
    for (size_t i = 0; i < leaf.size(); ++i) racks[leaf[i]] = i < 9 ? 0 : 1;
  PutInRacks(topology, racks);
  Checked c = PlanAndCheck(topology, "racks across leaves");
  ASSERT_TRUE(c.metrics.nvlink_domain);
  EXPECT_EQ(c.metrics.nvlink_domain->crossings, 2);
  EXPECT_EQ(c.metrics.ring_leaf_crossings, 2);

  // What the leaf order alone gives (the same hosts without fabric info):
  Topology plain = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 18, .spines = 2}));
  FabricGroups plain_groups = ComputeFabricGroups(plain);
  Result<RankMap> by_leaf = ComputeRankMap(plain_groups, HostNames(plain), false);
  ASSERT_TRUE(by_leaf.ok());
  FabricGroups groups = ComputeFabricGroups(topology);
  EXPECT_EQ(RingCrossings(NvlinkDomainIds(groups.nvlink, by_leaf->order)), 4) << "leaf order splits both racks";
}

TEST(NvlinkRankMap, ADomainSplitUnevenlyOverTwoLeaves) {
  // Rack 0: 12 trays on leaf 1 and 6 on leaf 2; rack 1 the other way round.
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 18, .spines = 1}));
  std::vector<std::vector<std::string>> leaves = HostsByLeaf(topology);
  std::map<std::string, int> racks;
  for (size_t i = 0; i < 18; ++i) racks[leaves[0][i]] = i < 12 ? 0 : 1, racks[leaves[1][i]] = i < 6 ? 0 : 1;
  PutInRacks(topology, racks);
  Checked c = PlanAndCheck(topology, "uneven split");
  ASSERT_TRUE(c.metrics.nvlink_domain);
  EXPECT_EQ(c.metrics.nvlink_domain->crossings, 2);
  EXPECT_EQ(c.metrics.ring_leaf_crossings, 2);
}

TEST(NvlinkRankMap, DomainsInsidePodsOfAThreeLevelTree) {
  // One rack per pod, cabled to both of the pod's leaves.
  Topology topology = TopologyOf(testing::ThreeLevelFatTree({.pods = 3, .leaves_per_pod = 2, .hosts_per_leaf = 6}));
  FabricGroups groups = ComputeFabricGroups(topology);
  std::map<std::string, int> racks;
  for (const auto& [host, place] : groups.hosts) racks[host] = place.groups.at(0);
  PutInRacks(topology, racks);
  Checked c = PlanAndCheck(topology, "three-level");
  ASSERT_TRUE(c.metrics.nvlink_domain);
  EXPECT_EQ(c.metrics.nvlink_domain->crossings, 3);
  EXPECT_EQ(c.metrics.ring_leaf_crossings, 6);
}

TEST(NvlinkRankMap, HostsOutsideEveryDomainAreTheirOwn) {
  // A rack of 8 with a tray whose fabric registration is still running, a
  // tray with one GPU in another clique (it goes with its majority), and two
  // plain hosts.
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 6, .spines = 1}));
  std::vector<std::string> hosts = NaturalSorted(HostNames(topology));
  std::map<std::string, int> racks;
  for (size_t i = 0; i < 8; ++i) racks[hosts[i]] = 0;
  PutInRacks(topology, racks);
  HostLayout in_progress = testing::TrayLayout("gb200-tray-fabric-in-progress.layout.json");
  AttachLayout(topology, hosts[2], in_progress);
  HostLayout split = testing::InRack(testing::TrayLayout(), 0);
  split.gpus.back().nvlink_fabric->clique_id = 9;
  AttachLayout(topology, hosts[5], split);
  FabricGroups groups = ComputeFabricGroups(topology);
  ASSERT_EQ(groups.nvlink.domains.size(), 1u);
  EXPECT_EQ(groups.nvlink.domains[0].hosts.size(), 7u) << "the split tray is in by its majority, the one in progress not";
  EXPECT_EQ(groups.nvlink.Find(hosts[2]), nullptr);
  EXPECT_NE(groups.nvlink.Find(hosts[5]), nullptr);
  Checked c = PlanAndCheck(topology, "mixed");
  ASSERT_TRUE(c.metrics.nvlink_domain);
  EXPECT_EQ(c.metrics.nvlink_domain->lower_bound, 6);  // the domain + 5 hosts of their own
}

TEST(NvlinkRankMap, WithoutFabricInfoNothingChanges) {
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 3, .hosts_per_leaf = 5, .spines = 2, .shuffled_names = true}));
  FabricGroups groups = ComputeFabricGroups(topology);
  EXPECT_TRUE(groups.nvlink.empty());
  Result<RankMap> map = ComputeRankMap(groups, HostNames(topology), false);
  ASSERT_TRUE(map.ok());
  PlanMetrics m = ComputeMetrics(&groups, map->order, HostNames(topology));
  EXPECT_FALSE(m.nvlink_domain.has_value());
  // Layouts without fabric info (an HGX tray) change nothing either.
  HostLayout hgx = testing::TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  for (const std::string& host : HostNames(topology)) AttachLayout(topology, host, hgx);
  FabricGroups with_layouts = ComputeFabricGroups(topology);
  Result<RankMap> same = ComputeRankMap(with_layouts, HostNames(topology), false);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->order, map->order);
}

TEST(NvlinkRankMap, UnknownHostsKeepTheirDomainTogether) {
  Topology topology = TopologyOf(testing::TwoLevelFatTree({.leaves = 1, .hosts_per_leaf = 2, .spines = 1}));
  for (const char* ghost : {"gpu1", "gpu2", "gpu3", "gpu4"}) AttachLayout(topology, ghost, HostLayout{});
  PutInRacks(topology, {{"gpu1", 0}, {"gpu3", 0}, {"gpu2", 1}, {"gpu4", 1}});
  FabricGroups groups = ComputeFabricGroups(topology);
  Result<RankMap> map = ComputeRankMap(groups, HostNames(topology), true);
  ASSERT_TRUE(map.ok());
  std::vector<std::string> tail(map->order.end() - 4, map->order.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"gpu1", "gpu3", "gpu2", "gpu4"}));
  EXPECT_EQ(map->unknown, (std::vector<std::string>{"gpu1", "gpu2", "gpu3", "gpu4"}));
}

// A layouts-only topology (no IB fabric walked) keeps the given order, but
// each domain together where its first host is.
TEST(NvlinkPlan, WithoutAFabricDomainsStillStayTogether) {
  Topology layouts;
  PutInRacks(layouts, {{"gb1", 0}, {"gb3", 0}, {"gb2", 1}, {"gb4", 1}});
  HostLayout hgx = testing::TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  AttachLayout(layouts, "cpu1", hgx);
  PlanRequest request;
  request.hosts = {"gb2", "gb1", "cpu1", "gb4", "gb3"};
  request.nproc_per_node = 1;
  Result<Plan> plan = ComputePlan(&layouts, request);
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  std::vector<std::string> order;
  for (const PlanNode& n : plan->nodes) order.push_back(n.host + (n.nvlink_domain.empty() ? "" : "@" + n.nvlink_domain));
  EXPECT_EQ(order, (std::vector<std::string>{"gb2@nvl1", "gb4@nvl1", "gb1@nvl0", "gb3@nvl0", "cpu1"}));
  ASSERT_TRUE(plan->metrics.nvlink_domain.has_value());
  EXPECT_EQ(plan->metrics.nvlink_domain->crossings, 3);
  EXPECT_EQ(plan->metrics.nvlink_domain->lower_bound, 3);
  EXPECT_EQ(plan->metrics.nvlink_domain->given_order_crossings, 5);
}

// --nnodes K: from the fewest domains, whole ones where they fit.
class NvlinkNodeChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    // 48 hosts on 3 leaves of 16; rack 0: leaf 1 and 2 hosts of leaf 2 (18),
    // rack 1: the other 14 of leaf 2 and 4 of leaf 3 (18), rack 2: the other
    // 12 of leaf 3.
    topology_ = TopologyOf(testing::TwoLevelFatTree({.leaves = 3, .hosts_per_leaf = 16, .spines = 2}));
    std::vector<std::string> all;
    for (const std::vector<std::string>& leaf : HostsByLeaf(topology_)) all.insert(all.end(), leaf.begin(), leaf.end());
    for (size_t i = 0; i < all.size(); ++i) racks_[all[i]] = i < 18 ? 0 : i < 36 ? 1 : 2;
    PutInRacks(topology_, racks_);
    groups_ = ComputeFabricGroups(topology_);
  }
  std::set<int> RacksOf(const std::vector<std::string>& hosts) {
    std::set<int> out;
    for (const std::string& h : hosts) out.insert(racks_.at(h));
    return out;
  }
  size_t InRack(const std::vector<std::string>& hosts, int rack) {
    return std::count_if(hosts.begin(), hosts.end(), [&](const std::string& h) { return racks_.at(h) == rack; });
  }
  Topology topology_;
  std::map<std::string, int> racks_;
  FabricGroups groups_;
};

TEST_F(NvlinkNodeChoice, AWholeDomainWhenOneHoldsTheJob) {
  Result<std::vector<std::string>> chosen = ChooseNodes(groups_, HostNames(topology_), 18);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(RacksOf(*chosen).size(), 1u) << "18 hosts fit one rack";
  Result<std::vector<std::string>> twelve = ChooseNodes(groups_, HostNames(topology_), 12);
  ASSERT_TRUE(twelve.ok());
  EXPECT_EQ(RacksOf(*twelve), std::set<int>{2}) << "the rack that fits best, the big ones kept whole";
}

TEST_F(NvlinkNodeChoice, FewestDomainsThenFewestLeaves) {
  // 30 = a rack of 18 and 12 more: rack 1 shares a leaf with rack 0, rack 2
  // (12, an exact fit) does not, so the 12 come from rack 1's hosts on that
  // leaf: two racks, two leaves.
  Result<std::vector<std::string>> chosen = ChooseNodes(groups_, HostNames(topology_), 30);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(InRack(*chosen, 0), 18u);
  EXPECT_EQ(InRack(*chosen, 1), 12u);
  std::set<int> leaves;
  for (const std::string& h : *chosen) leaves.insert(groups_.hosts.at(h).leaf_group);
  EXPECT_EQ(leaves.size(), 2u);
  Result<std::vector<std::string>> again = ChooseNodes(groups_, NaturalSorted(HostNames(topology_)), 30);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *chosen) << "deterministic whatever the pool's order";
}

TEST_F(NvlinkNodeChoice, TheFirstRackIsAWholeLeafWhenOnlyPartOfItIsNeeded) {
  Result<std::vector<std::string>> chosen = ChooseNodes(groups_, HostNames(topology_), 16);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(RacksOf(*chosen).size(), 1u);
  std::set<int> leaves;
  for (const std::string& h : *chosen) leaves.insert(groups_.hosts.at(h).leaf_group);
  EXPECT_EQ(leaves.size(), 1u) << "16 of rack 0's 18: the 16 on its own leaf";
  Result<std::vector<std::string>> twenty = ChooseNodes(groups_, HostNames(topology_), 20);
  ASSERT_TRUE(twenty.ok());
  EXPECT_EQ(RacksOf(*twenty).size(), 2u) << "18 + 2: two racks, the fewest that hold 20";
  EXPECT_EQ(InRack(*twenty, 2), 0u) << "the 2 extra come from the rack sharing a leaf with the first";
}

}  // namespace
}  // namespace topolaunch
