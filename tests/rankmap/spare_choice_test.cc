// Which spare replaces a lost node: its NVLink domain, its leaf group, else
// the fewest ring crossings; the same answer whatever the order of the pool.
#include "rankmap/spare_choice.h"

#include <gtest/gtest.h>

#include "rankmap/rank_map.h"
#include "rankmap_test_util.h"
#include "support/nvlink_racks.h"

namespace topolaunch {
namespace {

using testing::TopologyOf;

// Three leaves of four: node01-04, node05-08, node09-12.
Topology ThreeLeaves() { return TopologyOf(testing::TwoLevelFatTree({.leaves = 3, .hosts_per_leaf = 4, .spines = 2})); }

TEST(SpareChoice, OneOnTheLostNodesLeafFirst) {
  FabricGroups groups = ComputeFabricGroups(ThreeLeaves());
  std::vector<std::string> job = {"node01", "node02", "node05", "node06"};
  EXPECT_EQ(ChooseSpare(&groups, job, "node05", {"node12", "node03", "node08", "node07"}), "node07");
  EXPECT_EQ(ChooseSpare(&groups, job, "node05", {"node08", "node07"}), "node07") << "natural order among equals";
}

TEST(SpareChoice, ElseTheOneThatKeepsTheRingCrossingsLowest) {
  FabricGroups groups = ComputeFabricGroups(ThreeLeaves());
  // node05 was alone on its leaf; a spare on leaf 1 (with the others) keeps
  // one leaf, one on leaf 3 adds a second.
  std::vector<std::string> job = {"node01", "node02", "node05"};
  EXPECT_EQ(ChooseSpare(&groups, job, "node05", {"node09", "node10", "node04"}), "node04");
  EXPECT_EQ(ChooseSpare(&groups, job, "node05", {"node10", "node09"}), "node09");
}

TEST(SpareChoice, ASpareInTheLostNodesNvlinkDomainBeatsItsLeaf) {
  Topology t = ThreeLeaves();
  // Rack 0: node01-02 on leaf 1 and node05-06 on leaf 2; node03 shares
  // node01's leaf and node07 node05's, both in no rack.
  testing::PutInRacks(t, {{"node01", 0}, {"node02", 0}, {"node05", 0}, {"node06", 0}});
  FabricGroups groups = ComputeFabricGroups(t);
  EXPECT_EQ(ChooseSpare(&groups, {"node01", "node02", "node05"}, "node01", {"node03", "node06"}), "node06");
  EXPECT_EQ(ChooseSpare(&groups, {"node01", "node02", "node05"}, "node01", {"node03", "node07"}), "node03");
}

TEST(SpareChoice, WithoutAFabricTheFirstByName) {
  EXPECT_EQ(ChooseSpare(nullptr, {"a1", "a2"}, "a2", {"b10", "b9"}), "b9");
  EXPECT_EQ(ChooseSpare(nullptr, {"a1", "a2"}, "a2", {}), std::nullopt);
  FabricGroups groups = ComputeFabricGroups(ThreeLeaves());
  EXPECT_EQ(ChooseSpare(&groups, {"node01"}, "node01", {"ghost2", "ghost1"}), "ghost1") << "spares off the fabric only";
}

}  // namespace
}  // namespace topolaunch
