// Why the order matters, and how it is chosen.
//
// NCCL numbers nodes by the order in which each host's lowest rank appears,
// builds every inter-node ring in that node order (wrapping last -> first)
// and its double binary trees over the same node indices; it detects no
// network topology of its own (see nccl-env.md). So the host order the
// launcher hands over decides how many ring hops leave a leaf switch and go
// up through the spines, where bandwidth is shared and often oversubscribed.
//
// A ring over hosts spread across m leaves must cross between leaves at
// least m times (0 when m = 1): each leaf's hosts must be entered and left.
// The bound is reached exactly when each leaf's hosts are consecutive.
// The same argument holds at every higher level (spine groups, pods), so we
// sort hosts by a key that nests: (top-level group, ..., spine group, leaf
// group, host name). Each group is keyed by the natural-order rank of its
// smallest host name, which makes the order independent of the input order
// and easy to read: the group holding node01 comes first. Sorting keeps
// every group contiguous at every level at once, so crossings equal the
// bound at every level. The cost is one sort: O(n log n).
#include "rankmap/rank_map.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "core/hostlist.h"

namespace topolaunch {

std::vector<std::string> NaturalSorted(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  return hosts;
}

namespace {

struct Keyed {
  const std::string* name = nullptr;
  const HostPlace* place = nullptr;
  size_t natural = 0;          // index in natural order
  std::vector<size_t> key;     // top level first, then leaf group, then natural
};

// key[j] for level L..2 then the leaf group: min natural index of the group.
void AssignKeys(std::vector<Keyed>& hosts, const FabricGroups& groups) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<std::vector<size_t>> group_min(groups.group_levels);
  for (int l = 0; l < groups.group_levels; ++l) group_min[l].assign(groups.group_counts[l], kNone);
  std::vector<size_t> leaf_min(groups.leaf_groups, kNone);
  for (const Keyed& h : hosts) {  // natural order: the first seen is the smallest
    for (int l = 0; l < groups.group_levels; ++l) {
      size_t& m = group_min[l][h.place->groups[l]];
      if (m == kNone) m = h.natural;
    }
    if (leaf_min[h.place->leaf_group] == kNone) leaf_min[h.place->leaf_group] = h.natural;
  }
  for (Keyed& h : hosts) {
    h.key.reserve(groups.group_levels + 2);
    for (int l = groups.group_levels - 1; l >= 0; --l) h.key.push_back(group_min[l][h.place->groups[l]]);
    h.key.push_back(leaf_min[h.place->leaf_group]);
    h.key.push_back(h.natural);
  }
}

}  // namespace

Result<RankMap> ComputeRankMap(const FabricGroups& groups, const std::vector<std::string>& hosts,
                               bool allow_unknown) {
  std::vector<std::string> sorted = NaturalSorted(hosts);
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] == sorted[i - 1])
      return Error(ErrorCode::kBadInput, "hosts", fmt::format("host \"{}\" is listed twice", sorted[i]));
  RankMap map;
  std::vector<Keyed> placed;
  placed.reserve(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    auto it = groups.hosts.find(sorted[i]);
    if (it == groups.hosts.end()) map.unknown.push_back(sorted[i]);
    else placed.push_back({&sorted[i], &it->second, i, {}});
  }
  if (!map.unknown.empty() && !allow_unknown)
    return Error(ErrorCode::kBadInput, "hosts",
                 fmt::format("{} host(s) not on the fabric (not in the topology, or no cabled HCA): {} "
                             "(use --allow-unknown to place them last)",
                             map.unknown.size(), HostListForMessages(map.unknown)));
  AssignKeys(placed, groups);
  std::sort(placed.begin(), placed.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
  map.order.reserve(sorted.size());
  for (const Keyed& h : placed) map.order.push_back(*h.name);
  map.order.insert(map.order.end(), map.unknown.begin(), map.unknown.end());
  return map;
}

}  // namespace topolaunch
