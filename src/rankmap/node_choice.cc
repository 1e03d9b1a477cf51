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
//
// When hosts of the pool are in NVLink domains, domains come first: K hosts
// from the fewest domains (a host in none counts as a domain of one), since
// NVLink inside a domain is worth more than any IB placement. The fewest is
// reached by taking the largest domains until the rest fit in one. Among
// the domains that qualify at each step, those on a leaf group already
// chosen win, then those in a spine group already chosen (fewest leaves
// next); for the last one, then the smallest that holds the rest (best
// fit, which keeps whole domains free for the next job); then the smallest
// host name. In the last domain, hosts on leaf groups already chosen go
// first.
#include "rankmap/node_choice.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <tuple>

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

// A domain (or a host in none) of the pool, with where it sits.
struct Unit {
  std::vector<std::string> hosts;  // natural order
  std::vector<const HostPlace*> places;
};

std::vector<std::string> ChooseByDomain(const FabricGroups& groups, const std::vector<std::string>& sorted_pool,
                                        size_t want) {
  std::map<size_t, Unit> by_domain;
  std::vector<Unit> units;
  for (const std::string& host : sorted_pool) {
    auto d = groups.nvlink.domain_of.find(host);
    Unit* u = d == groups.nvlink.domain_of.end() ? &units.emplace_back() : &by_domain[d->second];
    u->hosts.push_back(host);
    u->places.push_back(&groups.hosts.at(host));
  }
  for (auto& [id, u] : by_domain) units.push_back(std::move(u));
  // By first host name, so that an index breaks ties by name.
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return NaturalLess(a.hosts.front(), b.hosts.front()); });
  std::set<int> leaf_groups, spine_groups;
  auto shares = [&](const Unit& u, const std::set<int>& chosen, bool spine) {
    for (const HostPlace* p : u.places) {
      int id = spine ? (p->groups.empty() ? 0 : p->groups[0]) : p->leaf_group;
      if (chosen.contains(id)) return true;
    }
    return false;
  };
  std::vector<bool> used(units.size(), false);
  std::vector<std::string> chosen;
  while (chosen.size() < want) {
    size_t need = want - chosen.size(), largest = 0;
    for (size_t i = 0; i < units.size(); ++i) if (!used[i]) largest = std::max(largest, units[i].hosts.size());
    bool last = largest >= need;
    // Before the last unit: a largest. The last: any that holds the rest.
    // Then: closest to what is chosen, (for the last) the smallest, the name.
    auto rank = [&](size_t i) {
      return std::tuple(!shares(units[i], leaf_groups, false), !shares(units[i], spine_groups, true),
                        last ? units[i].hosts.size() : 0, i);
    };
    size_t pick = units.size();
    for (size_t i = 0; i < units.size(); ++i) {
      size_t n = units[i].hosts.size();
      if (!used[i] && (last ? n >= need : n == largest) && (pick == units.size() || rank(i) < rank(pick))) pick = i;
    }
    used[pick] = true;
    Unit& u = units[pick];
    std::vector<size_t> order(u.hosts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return leaf_groups.contains(u.places[a]->leaf_group) > leaf_groups.contains(u.places[b]->leaf_group);
    });
    for (size_t i = 0; i < order.size() && chosen.size() < want; ++i) {
      const HostPlace* p = u.places[order[i]];
      chosen.push_back(u.hosts[order[i]]);
      leaf_groups.insert(p->leaf_group);
      spine_groups.insert(p->groups.empty() ? 0 : p->groups[0]);
    }
  }
  return chosen;
}

}  // namespace

Result<std::vector<std::string>> ChooseNodes(const FabricGroups& groups, const std::vector<std::string>& pool,
                                             int count) {
  if (count < 1 || static_cast<size_t>(count) > pool.size())
    return Error(ErrorCode::kBadUsage, "--nnodes",
                 fmt::format("{} nodes asked for, but only {} usable host(s) in the pool", count, pool.size()));
  size_t want = static_cast<size_t>(count);
  std::vector<std::string> sorted_pool = NaturalSorted(pool);
  if (std::any_of(pool.begin(), pool.end(), [&](const std::string& h) { return groups.nvlink.domain_of.contains(h); }))
    return NaturalSorted(ChooseByDomain(groups, sorted_pool, want));
  std::map<std::vector<Guid>, LeafGroup> by_leaves;
  for (const std::string& host : sorted_pool) {
    LeafGroup& l = by_leaves[groups.hosts.at(host).leaves];
    l.place = &groups.hosts.at(host);
    l.hosts.push_back(host);
  }
  std::vector<const LeafGroup*> all;
  for (const auto& [leaves, l] : by_leaves) all.push_back(&l);
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return NaturalLess(a->hosts.front(), b->hosts.front()); });
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
