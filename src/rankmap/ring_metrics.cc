#include "rankmap/ring_metrics.h"

#include <algorithm>
#include <unordered_set>

#include "rankmap/nccl_trees.h"
#include "rankmap/rank_map.h"

namespace topolaunch {

int RingCrossings(const std::vector<long>& ids) {
  if (ids.size() < 2) return 0;
  int crossings = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] != ids[(i + 1) % ids.size()]) ++crossings;
  return crossings;
}

int RingLowerBound(const std::vector<long>& ids) {
  std::unordered_set<long> distinct(ids.begin(), ids.end());
  return distinct.size() > 1 ? static_cast<int>(distinct.size()) : 0;
}

namespace {

// Each host's place (null when off the fabric): one hash lookup per host,
// then every level's ids come from it.
std::vector<const HostPlace*> Places(const FabricGroups& groups, const std::vector<std::string>& order) {
  std::vector<const HostPlace*> places;
  places.reserve(order.size());
  for (const std::string& host : order) {
    auto it = groups.hosts.find(host);
    places.push_back(it == groups.hosts.end() ? nullptr : &it->second);
  }
  return places;
}

std::vector<long> Ids(const std::vector<const HostPlace*>& places, int level) {
  std::vector<long> ids;
  ids.reserve(places.size());
  long unknown = -1;
  for (const HostPlace* p : places)
    ids.push_back(!p ? unknown-- : level == 1 ? p->leaf_group : p->groups.at(level - 2));
  return ids;
}

LevelCrossings Crossings(int level, std::string name, const std::vector<long>& planned,
                         const std::vector<long>& natural, const std::vector<long>& given) {
  LevelCrossings c;
  c.level = level;
  c.name = std::move(name);
  c.crossings = RingCrossings(planned);
  c.lower_bound = RingLowerBound(planned);
  c.hostname_order_crossings = RingCrossings(natural);
  c.given_order_crossings = RingCrossings(given);
  c.tree_crossings = TreeCrossings(planned);
  c.tree_lower_bound = TreeLowerBound(planned);
  c.hostname_order_tree_crossings = TreeCrossings(natural);
  c.given_order_tree_crossings = TreeCrossings(given);
  return c;
}

}  // namespace

std::vector<long> NvlinkDomainIds(const NvlinkDomains& domains, const std::vector<std::string>& order) {
  std::vector<long> ids;
  ids.reserve(order.size());
  long none = -1;
  for (const std::string& host : order) {
    auto it = domains.domain_of.find(host);
    ids.push_back(it == domains.domain_of.end() ? none-- : static_cast<long>(it->second));
  }
  return ids;
}

std::vector<long> GroupIds(const FabricGroups& groups, const std::vector<std::string>& order, int level) {
  return Ids(Places(groups, order), level);
}

PlanMetrics ComputeMetrics(const FabricGroups* groups, const std::vector<std::string>& order,
                           const std::vector<std::string>& given, const NvlinkDomains* domains) {
  FabricGroups none;
  const FabricGroups& g = groups ? *groups : none;
  std::vector<std::string> by_name = NaturalSorted(order);
  std::vector<const HostPlace*> planned = Places(g, order), natural = Places(g, by_name), user = Places(g, given);
  PlanMetrics metrics;
  for (int level = 1; level <= 1 + g.group_levels; ++level)
    metrics.levels.push_back(
        Crossings(level, LevelName(level), Ids(planned, level), Ids(natural, level), Ids(user, level)));
  const NvlinkDomains& d = domains ? *domains : g.nvlink;
  if (!d.empty()) {  // else every host is its own domain: no level of its own
    std::vector<long> in_domain = NvlinkDomainIds(d, order);
    if (std::any_of(in_domain.begin(), in_domain.end(), [](long id) { return id >= 0; }))
      metrics.nvlink_domain =
          Crossings(0, "nvlink_domain", in_domain, NvlinkDomainIds(d, by_name), NvlinkDomainIds(d, given));
  }
  const LevelCrossings& leaf = metrics.levels.front();
  metrics.ring_leaf_crossings = leaf.crossings;
  metrics.ring_leaf_crossings_lower_bound = leaf.lower_bound;
  metrics.hostname_order_ring_leaf_crossings = leaf.hostname_order_crossings;
  metrics.given_order_ring_leaf_crossings = leaf.given_order_crossings;
  return metrics;
}

}  // namespace topolaunch
