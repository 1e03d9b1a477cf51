// The inter-node trees NCCL builds over the node order (NCCL's
// src/graph/trees.cc, ncclGetBtree/ncclGetDtree): a double binary tree.
// Tree 0 is a binary tree rooted at node 0 in which a node's parent is found
// by bit tricks on its index, so nodes 1, 2, 4, 8, ... apart are linked; tree
// 1 is tree 0 mirrored (an even node count) or shifted by one (odd). NCCL
// places nodes in the order their ranks come, so the launcher's order decides
// which hosts the tree links -- but only the lowest tree edges join
// neighbours in that order: the edges near the roots span half the job
// whatever the order, so they cross spines on any fabric wider than a spine
// group. Pure logic.
#pragma once

#include <utility>
#include <vector>

namespace topolaunch {

/// The parent of `node` in NCCL's tree 0 over `nodes` nodes (-1 for the root,
/// node 0), exactly as ncclGetBtree computes it.
int NcclBtreeParent(int nodes, int node);

/// Every (child, parent) edge of both trees of NCCL's double binary tree
/// over `nodes` nodes: 2 * (nodes - 1) edges, none for fewer than 2 nodes.
std::vector<std::pair<int, int>> NcclDtreeEdges(int nodes);

/// Edges of both trees whose two nodes have different ids (`ids[i]` names
/// node i's group).
int TreeCrossings(const std::vector<long>& ids);

/// The fewest crossings any order could give: each tree must join every
/// group used, so 2 * (groups - 1).
int TreeLowerBound(const std::vector<long>& ids);

}  // namespace topolaunch
