// A spare keeps the ring as good as before when it sits where the lost
// node sat: in its NVLink domain, else under its leaves. Otherwise every
// candidate is tried: the remaining nodes plus the spare are ordered as
// `plan` orders them and the ring's crossings counted, level by level from
// the innermost. Spares that sit alike (same leaf group and domain) give
// the same crossings, so one of each kind is tried: a few dozen plans even
// on a pool of thousands.
#include "rankmap/spare_choice.h"

#include <algorithm>
#include <map>

#include "rankmap/rank_map.h"
#include "rankmap/ring_metrics.h"

namespace topolaunch {

namespace {

// The crossings of the ring over `hosts` in plan order: domain, leaf, then
// each level above; lower is better, compared in that order.
std::vector<int> RingCost(const FabricGroups& groups, const std::vector<std::string>& hosts) {
  Result<RankMap> map = ComputeRankMap(groups, hosts, /*allow_unknown=*/true);
  if (!map.ok()) return {1 << 30};
  PlanMetrics m = ComputeMetrics(&groups, map->order, map->order);
  std::vector<int> cost{m.nvlink_domain ? m.nvlink_domain->crossings : 0};
  for (const LevelCrossings& level : m.levels) cost.push_back(level.crossings);
  return cost;
}

}  // namespace

std::optional<std::string> ChooseSpare(const FabricGroups* groups, const std::vector<std::string>& current,
                                       const std::string& lost, const std::vector<std::string>& spares) {
  if (spares.empty()) return std::nullopt;
  std::vector<std::string> sorted = NaturalSorted(spares);
  if (!groups) return sorted.front();
  auto place = [&](const std::string& host) -> const HostPlace* {
    auto it = groups->hosts.find(host);
    return it == groups->hosts.end() ? nullptr : &it->second;
  };
  const NvlinkDomain* domain = groups->nvlink.Find(lost);
  const HostPlace* lost_place = place(lost);
  if (domain)
    for (const std::string& s : sorted)
      if (groups->nvlink.Find(s) == domain && place(s)) return s;
  if (lost_place)
    for (const std::string& s : sorted)
      if (const HostPlace* p = place(s); p && p->leaves == lost_place->leaves) return s;
  std::vector<std::string> rest;
  for (const std::string& h : current)
    if (h != lost) rest.push_back(h);
  // One candidate per kind of place: (leaf group, domain).
  std::map<std::pair<int, long>, std::string> kinds;
  for (const std::string& s : sorted) {
    const HostPlace* p = place(s);
    if (!p) continue;
    auto d = groups->nvlink.domain_of.find(s);
    kinds.emplace(std::pair(p->leaf_group, d == groups->nvlink.domain_of.end() ? -1L : static_cast<long>(d->second)), s);
  }
  if (kinds.empty()) return sorted.front();
  std::optional<std::string> best;
  std::vector<int> best_cost;
  for (const auto& [kind, candidate] : kinds) {
    rest.push_back(candidate);
    std::vector<int> cost = RingCost(*groups, rest);
    rest.pop_back();
    if (!best || cost < best_cost || (cost == best_cost && NaturalLess(candidate, *best))) best = candidate, best_cost = cost;
  }
  return best;
}

}  // namespace topolaunch
