#include "rankmap/nccl_trees.h"

#include <cstddef>
#include <unordered_set>

namespace topolaunch {

int NcclBtreeParent(int nodes, int node) {
  if (node == 0) return -1;
  int bit = 1;
  while (bit < nodes && !(bit & node)) bit <<= 1;  // the lowest set bit
  int up = (node ^ bit) | (bit << 1);
  return up >= nodes ? node ^ bit : up;
}

std::vector<std::pair<int, int>> NcclDtreeEdges(int nodes) {
  std::vector<std::pair<int, int>> edges;
  if (nodes < 2) return edges;
  edges.reserve(2 * static_cast<size_t>(nodes - 1));
  for (int node = 1; node < nodes; ++node) edges.emplace_back(node, NcclBtreeParent(nodes, node));
  // Tree 1: shifted by one for an odd count, mirrored for an even one.
  for (int node = 0; node < nodes; ++node) {
    if (nodes % 2 == 1) {
      int shifted = (node - 1 + nodes) % nodes;
      int up = NcclBtreeParent(nodes, shifted);
      if (up != -1) edges.emplace_back(node, (up + 1) % nodes);
    } else {
      int up = NcclBtreeParent(nodes, nodes - 1 - node);
      if (up != -1) edges.emplace_back(node, nodes - 1 - up);
    }
  }
  return edges;
}

int TreeCrossings(const std::vector<long>& ids) {
  int crossings = 0;
  for (const auto& [child, parent] : NcclDtreeEdges(static_cast<int>(ids.size())))
    if (ids[child] != ids[parent]) ++crossings;
  return crossings;
}

int TreeLowerBound(const std::vector<long>& ids) {
  std::unordered_set<long> distinct(ids.begin(), ids.end());
  return distinct.size() > 1 ? 2 * static_cast<int>(distinct.size() - 1) : 0;
}

}  // namespace topolaunch
