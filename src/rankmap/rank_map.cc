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
//
// NVLink domains (GB200 NVL72 racks) sit below the leaf: inside a domain the
// GPUs talk over NVLink, and NCCL treats the domain as one node, so a ring
// that leaves a domain and comes back sends over InfiniBand what NVLink
// would carry. Each domain must be contiguous, which reaches its own bound
// (one crossing in and out per domain), and the key gains (domain, host)
// below the leaf. A domain usually hangs off one leaf group, and then the
// leaf order is untouched. A rack cabled to two leaf groups cannot be
// contiguous and keep both leaves contiguous, unless it sits on the border
// of the two: at the end of one group's run, its hosts on the next group
// last, so that the next run goes on from them. Each border between
// neighbouring leaf groups in the order (a ring of them: the last borders
// the first) takes one such domain, filed under the side holding more of
// its hosts. Then both levels stay at their bounds. A domain reaching more
// leaf groups, or two that are not neighbours, or finding its border taken,
// sits inside the run of the leaf group holding most of its hosts and costs
// extra leaf crossings, which the metrics show. A host in no domain keys as
// before, so without domains the order is exactly the one above.
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

constexpr size_t kNone = static_cast<size_t>(-1);

struct Keyed {
  const std::string* name = nullptr;
  const HostPlace* place = nullptr;
  size_t natural = 0;          // index in natural order
  size_t unit = 0;             // its NVLink domain, kNone when in none
  std::vector<size_t> key;     // top level first, then leaf group, domain, host
};

// The first sort keys of a leaf group: its groups from the top down (each
// the smallest natural index in it), then its own smallest.
struct LeafGroupKeys {
  std::vector<std::vector<size_t>> keys;  // by leaf group id; empty when no host is there
  std::vector<size_t> position;           // place in the sorted order, kNone when absent
  size_t present = 0;
};

LeafGroupKeys OrderLeafGroups(const std::vector<Keyed>& hosts, const FabricGroups& groups) {
  std::vector<std::vector<size_t>> group_min(groups.group_levels);
  for (int l = 0; l < groups.group_levels; ++l) group_min[l].assign(groups.group_counts[l], kNone);
  std::vector<size_t> leaf_min(groups.leaf_groups, kNone);
  std::vector<const HostPlace*> sample(groups.leaf_groups, nullptr);
  for (const Keyed& h : hosts) {  // natural order: the first seen is the smallest
    for (int l = 0; l < groups.group_levels; ++l) {
      size_t& m = group_min[l][h.place->groups[l]];
      if (m == kNone) m = h.natural;
    }
    if (leaf_min[h.place->leaf_group] == kNone) leaf_min[h.place->leaf_group] = h.natural, sample[h.place->leaf_group] = h.place;
  }
  LeafGroupKeys out;
  out.keys.resize(groups.leaf_groups);
  std::vector<int> present;
  for (int g = 0; g < groups.leaf_groups; ++g) {
    if (!sample[g]) continue;
    for (int l = groups.group_levels - 1; l >= 0; --l) out.keys[g].push_back(group_min[l][sample[g]->groups[l]]);
    out.keys[g].push_back(leaf_min[g]);
    present.push_back(g);
  }
  std::sort(present.begin(), present.end(), [&](int a, int b) { return out.keys[a] < out.keys[b]; });
  out.position.assign(groups.leaf_groups, kNone);
  for (size_t i = 0; i < present.size(); ++i) out.position[present[i]] = i;
  out.present = present.size();
  return out;
}

// Where a unit (an NVLink domain, or one host) goes: under its home leaf
// group, at the start (0), middle (1) or end (2) of that group's run; a
// unit on the border of two neighbouring leaf groups has the other one as
// `neighbour`, whose hosts come next to that group's run.
struct UnitPlace {
  int home = -1;
  int neighbour = -1;
  size_t cls = 1;
  size_t first = kNone;                 // smallest natural index
  std::map<int, size_t> members;        // leaf group -> hosts of the unit there
};

// Inside a unit: the hosts facing the previous run first, those facing the
// next run last.
size_t SubKey(const UnitPlace& u, int leaf_group) {
  if (u.cls == 2) return leaf_group == u.home ? 0 : leaf_group == u.neighbour ? 2 : 1;
  if (u.cls == 0) return leaf_group == u.neighbour ? 0 : leaf_group == u.home ? 2 : 1;
  return leaf_group == u.home ? 0 : 1;
}

// Each border between neighbouring leaf groups (slot k: between positions
// k and k+1, cyclically) holds one unit that reaches exactly those two; the
// unit is filed under the side holding more of its hosts. Every other unit
// goes in the middle of the run of the leaf group holding most of its hosts.
void PlaceUnits(std::vector<UnitPlace>& units, const LeafGroupKeys& order) {
  const size_t n = order.present;
  std::vector<bool> slot_used(n, false);
  std::vector<UnitPlace*> by_first;
  for (UnitPlace& u : units)
    if (!u.members.empty()) by_first.push_back(&u);
  std::sort(by_first.begin(), by_first.end(), [](const UnitPlace* a, const UnitPlace* b) { return a->first < b->first; });
  for (UnitPlace* u : by_first) {
    size_t most = 0;
    for (const auto& [g, count] : u->members)  // the most hosts; ties: the earlier leaf group
      if (count > most || (count == most && u->home >= 0 && order.position[g] < order.position[u->home])) u->home = g, most = count;
    if (u->members.size() != 2 || n < 2) continue;
    int a = u->members.begin()->first, b = std::next(u->members.begin())->first;
    if (order.position[a] > order.position[b]) std::swap(a, b);
    // a left of b at slot pos(a), or b left of a across the wrap at slot pos(b).
    for (auto [left, right] : {std::pair{a, b}, std::pair{b, a}}) {
      size_t slot = order.position[left];
      if ((slot + 1) % n != order.position[right] || slot_used[slot]) continue;
      slot_used[slot] = true;
      bool left_home = u->members.at(left) >= u->members.at(right);
      u->home = left_home ? left : right;
      u->neighbour = left_home ? right : left;
      u->cls = left_home ? 2 : 0;
      break;
    }
  }
}

void AssignKeys(std::vector<Keyed>& hosts, const FabricGroups& groups) {
  LeafGroupKeys order = OrderLeafGroups(hosts, groups);
  // Units of more than one host are the NVLink domains; a host in none is
  // placed as before: in the middle of its own leaf group's run.
  std::vector<UnitPlace> units(groups.nvlink.domains.size());
  const bool any_domain = !groups.nvlink.domain_of.empty();
  for (Keyed& h : hosts) {
    auto d = any_domain ? groups.nvlink.domain_of.find(*h.name) : groups.nvlink.domain_of.end();
    h.unit = d != groups.nvlink.domain_of.end() ? d->second : kNone;
    if (h.unit == kNone) continue;
    UnitPlace& u = units[h.unit];
    ++u.members[h.place->leaf_group];
    if (u.first == kNone) u.first = h.natural;
  }
  PlaceUnits(units, order);
  for (Keyed& h : hosts) {
    int own = h.place->leaf_group;
    UnitPlace single{own, -1, 1, h.natural, {}};
    const UnitPlace& u = h.unit == kNone ? single : units[h.unit];
    h.key.reserve(order.keys[u.home].size() + 5);
    h.key = order.keys[u.home];
    h.key.insert(h.key.end(), {u.cls, u.first, SubKey(u, own), order.position[own], h.natural});
  }
}

}  // namespace

std::vector<std::string> KeepNvlinkDomainsTogether(const std::vector<std::string>& hosts, const NvlinkDomains& domains) {
  if (domains.empty()) return hosts;
  std::vector<std::vector<std::string>> runs;
  std::unordered_map<size_t, size_t> run_of;  // domain -> index in runs
  for (const std::string& host : hosts) {
    auto d = domains.domain_of.find(host);
    if (d == domains.domain_of.end()) {
      runs.push_back({host});
      continue;
    }
    auto [it, added] = run_of.emplace(d->second, runs.size());
    if (added) runs.emplace_back();
    runs[it->second].push_back(host);
  }
  std::vector<std::string> out;
  out.reserve(hosts.size());
  for (std::vector<std::string>& run : runs) out.insert(out.end(), run.begin(), run.end());
  return out;
}

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
    else placed.push_back({&sorted[i], &it->second, i, 0, {}});
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
  std::vector<std::string> unknown = KeepNvlinkDomainsTogether(map.unknown, groups.nvlink);
  map.order.insert(map.order.end(), unknown.begin(), unknown.end());
  return map;
}

}  // namespace topolaunch
