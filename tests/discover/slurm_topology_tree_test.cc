#include "discover/slurm_topology_tree.h"

#include <gtest/gtest.h>

#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::HandTopology;

SlurmTree Tree(const Topology& topology, const SlurmTreeOptions& options = {}) {
  Result<SlurmTree> tree = BuildSlurmTree(topology, options);
  EXPECT_TRUE(tree.ok()) << tree.error().Message();
  return tree.ok() ? *tree : SlurmTree{};
}

const SlurmSwitchLine* LineNamed(const SlurmTree& tree, const std::string& name) {
  for (const SlurmSwitchLine& line : tree.lines)
    if (line.name == name) return &line;
  return nullptr;
}

using Names = std::vector<std::string>;

TEST(SlurmTree, ASpineWithStorageHostsIsAboveTheLeaves) {
  SlurmTree tree = Tree(testing::HostedSpineTopology());
  ASSERT_EQ(tree.lines.size(), 4u);
  const SlurmSwitchLine* spine = LineNamed(tree, "spine");
  ASSERT_NE(spine, nullptr);
  EXPECT_EQ(spine->level, 2);
  EXPECT_EQ(spine->members, (Names{"leaf1", "leaf2", "leaf3"}));
  EXPECT_EQ(tree.above_leaves, (Names{"store1", "store2"}));
  EXPECT_EQ(tree.hosts, 12u);
}

TEST(SlurmTree, AHostedSpineWithFewCablesStaysALeaf) {
  // One cable to each leaf, two storage hosts and a third: fewer cables to
  // the leaves (3) than to its own hosts (3) -- judged a leaf, joined by root.
  HandTopology t;
  t.Switch(0x11, "leaf1", 1).Switch(0x12, "leaf2", 1).Switch(0x13, "leaf3", 1).Switch(0x20, "spine", 1);
  for (int i = 1; i <= 4; ++i)
    t.Hca("gpu0" + std::to_string(i), 0x100 + i, "mlx5_0", 0x11)
        .Hca("gpu1" + std::to_string(i), 0x200 + i, "mlx5_0", 0x12)
        .Hca("gpu2" + std::to_string(i), 0x300 + i, "mlx5_0", 0x13);
  for (int i = 1; i <= 3; ++i) t.Hca("store" + std::to_string(i), 0x400 + i, "mlx5_0", 0x20);
  for (Guid leaf : {0x11, 0x12, 0x13}) t.Cable(leaf, 0x20);
  SlurmTree tree = Tree(t.Build());
  ASSERT_NE(LineNamed(tree, "spine"), nullptr);
  EXPECT_EQ(LineNamed(tree, "spine")->level, 1);
  EXPECT_TRUE(tree.above_leaves.empty());
  ASSERT_NE(LineNamed(tree, "root"), nullptr);
  EXPECT_EQ(LineNamed(tree, "root")->members, (Names{"leaf1", "leaf2", "leaf3", "spine"}));
}

TEST(SlurmTree, SlurmNodesChoosesTheHostsAndTheLeaves) {
  SlurmTreeOptions options;
  options.nodes = std::set<std::string>{"gpu01", "gpu02", "gpu11", "gpu21", "gpu24", "absent1", "absent2"};
  SlurmTree tree = Tree(testing::HostedSpineTopology(), options);
  EXPECT_EQ(tree.hosts, 5u);
  EXPECT_EQ(tree.not_selected, 9u);  // 7 compute hosts, 2 storage hosts
  EXPECT_TRUE(tree.above_leaves.empty());
  EXPECT_EQ(tree.selected_missing, (Names{"absent1", "absent2"}));
  ASSERT_NE(LineNamed(tree, "leaf1"), nullptr);
  EXPECT_EQ(LineNamed(tree, "leaf1")->members, (Names{"gpu01", "gpu02"}));
  ASSERT_NE(LineNamed(tree, "spine"), nullptr);
  EXPECT_EQ(LineNamed(tree, "spine")->level, 2);
}

TEST(SlurmTree, LeavesCabledToEachOtherGetARoot) {
  // A mesh: c has fewer hosts and many cables, but a and b meet directly.
  SlurmTree tree = Tree(testing::LeafMeshTopology());
  ASSERT_EQ(tree.lines.size(), 4u);
  EXPECT_EQ(tree.hosts, 10u);
  const SlurmSwitchLine& root = tree.lines.back();
  EXPECT_TRUE(root.added_root);
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.level, 2);
  EXPECT_EQ(root.members, (Names{"a", "b", "c"}));
}

TEST(SlurmTree, TheRootNameIsNotTaken) {
  HandTopology t;
  t.Switch(0x11, "root", 1).Switch(0x12, "root-1", 1);
  t.Hca("n1", 0x21, "mlx5_0", 0x11).Hca("n2", 0x22, "mlx5_0", 0x12).Cable(0x11, 0x12);
  SlurmTree tree = Tree(t.Build());
  ASSERT_EQ(tree.lines.size(), 3u);
  EXPECT_EQ(tree.lines.back().name, "root-2");
}

TEST(SlurmTree, OneTopNeedsNoRoot) {
  SlurmTree tree = Tree(testing::ThreeLevelTopology());
  for (const SlurmSwitchLine& line : tree.lines) EXPECT_FALSE(line.added_root) << line.name;
}

TEST(SlurmTree, SpinesWithTheSameChildrenAreOneLineAndTheLevelAboveFollows) {
  // Two planes of two spines over the same two leaves; two cores, each over
  // one spine of each plane: after the merge both cores have one child.
  HandTopology t;
  t.Switch(0x11, "leaf1", 1).Switch(0x12, "leaf2", 1);
  t.Switch(0x21, "spine1", 2).Switch(0x22, "spine2", 2).Switch(0x23, "spine3", 2);
  t.Switch(0x31, "core1", 3).Switch(0x32, "core2", 3);
  t.Hca("n1", 0x41, "mlx5_0", 0x11).Hca("n2", 0x42, "mlx5_0", 0x12);
  for (Guid spine : {0x21, 0x22, 0x23}) t.Cable(0x11, spine).Cable(0x12, spine);
  t.Cable(0x21, 0x31).Cable(0x22, 0x31).Cable(0x23, 0x32);
  SlurmTree tree = Tree(t.Build());
  ASSERT_EQ(tree.lines.size(), 4u);
  EXPECT_EQ(tree.merged_away, 3u);
  const SlurmSwitchLine* spine = LineNamed(tree, "spine1");
  ASSERT_NE(spine, nullptr);
  EXPECT_EQ(spine->stands_for, 3u);
  EXPECT_EQ(spine->members, (Names{"leaf1", "leaf2"}));
  const SlurmSwitchLine* core = LineNamed(tree, "core1");
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->stands_for, 2u);
  EXPECT_EQ(core->members, (Names{"spine1"}));
  EXPECT_EQ(LineNamed(tree, "spine2"), nullptr);
  EXPECT_EQ(LineNamed(tree, "core2"), nullptr);
}

TEST(SlurmTree, NothingToWriteSaysWhy) {
  HandTopology unnamed;
  unnamed.Switch(0x11, "leaf", 1).Unmapped(0x21, "MT4123 ConnectX6 Mellanox Technologies", "firmware default");
  Result<SlurmTree> tree = BuildSlurmTree(unnamed.Build(), {});
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.error().Message().find("1 CAs have no host name"), std::string::npos) << tree.error().Message();

  SlurmTreeOptions none;
  none.nodes = std::set<std::string>{"other1"};
  tree = BuildSlurmTree(testing::TwoLevelTopology(), none);
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.error().Message().find("--slurm-nodes matches none of the 4 cabled hosts"), std::string::npos)
      << tree.error().Message();
}

}  // namespace
}  // namespace topolaunch
