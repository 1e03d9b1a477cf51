#include "rankmap/nccl_trees.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

// The illustration above ncclGetBtree in NCCL's src/graph/trees.cc (14 ranks).
TEST(NcclTrees, BtreeParentsAreNcclsIllustration) {
  const std::map<int, int> kParent = {{0, -1}, {1, 2},  {2, 4},  {3, 2},  {4, 8},   {5, 6},   {6, 4},
                                      {7, 6},  {8, 0},  {9, 10}, {10, 12}, {11, 10}, {12, 8}, {13, 12}};
  for (const auto& [node, parent] : kParent) EXPECT_EQ(NcclBtreeParent(14, node), parent) << node;
}

using Edges = std::vector<std::pair<int, int>>;

bool Has(const Edges& edges, std::pair<int, int> edge) {
  return std::find(edges.begin(), edges.end(), edge) != edges.end();
}

// The second tree: ncclGetDtree's illustrations, shifted for 13, mirrored for 12.
TEST(NcclTrees, SecondTreeIsShiftedForOddAndMirroredForEven) {
  Edges odd = NcclDtreeEdges(13);
  for (std::pair<int, int> edge : {std::pair{9, 1}, {5, 9}, {0, 9}, {11, 0}, {12, 11}, {2, 3}})
    EXPECT_TRUE(Has(odd, edge)) << edge.first << "->" << edge.second;
  Edges even = NcclDtreeEdges(12);
  for (std::pair<int, int> edge : {std::pair{3, 11}, {7, 3}, {1, 3}, {0, 1}, {10, 9}})
    EXPECT_TRUE(Has(even, edge)) << edge.first << "->" << edge.second;
}

TEST(NcclTrees, BothTreesSpanEveryNode) {
  for (int n = 0; n <= 70; ++n) {
    SCOPED_TRACE(n);
    Edges edges = NcclDtreeEdges(n);
    ASSERT_EQ(edges.size(), n < 2 ? 0u : 2u * (n - 1));
    for (size_t tree = 0; tree < 2 && n >= 2; ++tree) {
      std::map<int, int> parent;
      for (size_t i = tree * (n - 1); i < (tree + 1) * (n - 1); ++i) {
        auto [child, up] = edges[i];
        ASSERT_TRUE(parent.emplace(child, up).second) << "two parents for " << child;
        ASSERT_GE(up, 0);
        ASSERT_LT(up, n);
      }
      // Every node reaches the one node without a parent, in fewer than n steps.
      for (int node = 0; node < n; ++node) {
        int at = node, steps = 0;
        while (parent.contains(at) && steps < n) at = parent[at], ++steps;
        EXPECT_LT(steps, n) << "a cycle through " << node;
        EXPECT_FALSE(parent.contains(at));
      }
    }
  }
}

TEST(NcclTrees, ContiguousGroupsStillCrossAboveTheBound) {
  // Two leaves of four nodes: tree 0 links 2 -> 4 and 4 -> 0, its mirror
  // 5 -> 3 and 3 -> 7, where one edge per tree would join the two leaves.
  std::vector<long> two = {0, 0, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(TreeCrossings(two), 4);
  EXPECT_EQ(TreeLowerBound(two), 2);
  // Four leaves of two: the upper edges link nodes 2 and 4 apart, across
  // leaves, in both trees: 10 crossings where 6 would join four groups.
  std::vector<long> four = {0, 0, 1, 1, 2, 2, 3, 3};
  EXPECT_EQ(TreeCrossings(four), 10);
  EXPECT_EQ(TreeLowerBound(four), 6);
  EXPECT_EQ(TreeCrossings({7}), 0);
  EXPECT_EQ(TreeLowerBound({7, 7, 7}), 0);
}

}  // namespace
}  // namespace topolaunch
