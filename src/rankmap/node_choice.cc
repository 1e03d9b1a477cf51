// Node choice: fewest leaves first, then fewest groups above.
//
// The fewest leaf groups m that can hold K hosts is found by taking the
// fullest leaf groups first until they hold K. Any m leaf groups holding K
// will do, so we then look for them inside as small a part of the tree as
// possible: walking down from the top level, if some group of that level can
// hold K with only m of its own leaf groups, we descend into it (choosing
// the one that fits most tightly, which keeps large groups free for the next
// job; ties by the smallest host name). Where no single group fits, we take
// the m fullest leaf groups of the current part, preferring leaf groups
// whose own parent group holds more hosts, so the choice stays clustered.
// This is exact for the number of leaves and for the common case that one
// group can hold the job; across groups it is a greedy approximation.
// Inside the last (partial) leaf group, hosts are taken in natural order.
#include "rankmap/node_choice.h"

#include <algorithm>
#include <climits>
#include <map>

#include <fmt/format.h>

#include "rankmap/rank_map.h"

namespace topolaunch {

namespace {

struct LeafGroup {
  std::vector<std::string> hosts;  // natural order
  const HostPlace* place = nullptr;
};

// Fewest of `leaves` (fullest first) holding `count` hosts; INT_MAX if none.
int FewestLeaves(std::vector<const LeafGroup*> leaves, size_t count) {
  std::sort(leaves.begin(), leaves.end(), [](auto* a, auto* b) { return a->hosts.size() > b->hosts.size(); });
  size_t held = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    held += leaves[i]->hosts.size();
    if (held >= count) return static_cast<int>(i + 1);
  }
  return INT_MAX;
}

size_t Capacity(const std::vector<const LeafGroup*>& leaves) {
  size_t n = 0;
  for (const LeafGroup* l : leaves) n += l->hosts.size();
  return n;
}

// Narrows `part` to one group of `level` (index into groups, -1 = none
// left) that holds `count` with `m` leaf groups, recursively.
std::vector<const LeafGroup*> Narrow(std::vector<const LeafGroup*> part, int level, size_t count, int m) {
  for (; level >= 0; --level) {
    std::map<int, std::vector<const LeafGroup*>> by_group;
    for (const LeafGroup* l : part) by_group[l->place->groups[level]].push_back(l);
    const std::vector<const LeafGroup*>* best = nullptr;
    for (const auto& [id, members] : by_group) {
      if (FewestLeaves(members, count) != m) continue;
      // Members are in smallest-host order, so the first host names the group.
      auto tighter = [&](const auto& a, const auto& b) {
        if (Capacity(a) != Capacity(b)) return Capacity(a) < Capacity(b);
        return NaturalLess(a.front()->hosts.front(), b.front()->hosts.front());
      };
      if (!best || tighter(members, *best)) best = &members;
    }
    if (!best) break;  // groups nest: nothing below fits either
    part = *best;
  }
  return part;
}

}  // namespace

Result<std::vector<std::string>> ChooseNodes(const FabricGroups& groups, const std::vector<std::string>& pool,
                                             int count) {
  if (count < 1 || static_cast<size_t>(count) > pool.size())
    return Error(ErrorCode::kBadUsage, "--nnodes",
                 fmt::format("{} nodes asked for, but only {} usable host(s) in the pool", count, pool.size()));
  std::map<std::vector<Guid>, LeafGroup> by_leaves;
  for (const std::string& host : NaturalSorted(pool)) {
    LeafGroup& l = by_leaves[groups.hosts.at(host).leaves];
    l.place = &groups.hosts.at(host);
    l.hosts.push_back(host);
  }
  std::vector<const LeafGroup*> all;
  for (const auto& [leaves, l] : by_leaves) all.push_back(&l);
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return NaturalLess(a->hosts.front(), b->hosts.front()); });
  size_t want = static_cast<size_t>(count);
  int m = FewestLeaves(all, want);
  std::vector<const LeafGroup*> part = Narrow(all, groups.group_levels - 1, want, m);

  // Fullest leaf groups first; among equals, those whose spine group holds more.
  std::map<int, size_t> spine_capacity;
  for (const LeafGroup* l : part) if (!l->place->groups.empty()) spine_capacity[l->place->groups[0]] += l->hosts.size();
  auto parent = [&](const LeafGroup* l) { return l->place->groups.empty() ? 0 : spine_capacity[l->place->groups[0]]; };
  std::stable_sort(part.begin(), part.end(), [&](auto* a, auto* b) {
    if (a->hosts.size() != b->hosts.size()) return a->hosts.size() > b->hosts.size();
    return parent(a) > parent(b);
  });
  std::vector<std::string> chosen;
  for (const LeafGroup* l : part) {
    for (const std::string& host : l->hosts) {
      if (chosen.size() == want) break;
      chosen.push_back(host);
    }
  }
  return NaturalSorted(std::move(chosen));
}

}  // namespace topolaunch
