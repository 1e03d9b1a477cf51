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

}  // namespace

std::vector<long> GroupIds(const FabricGroups& groups, const std::vector<std::string>& order, int level) {
  return Ids(Places(groups, order), level);
}

PlanMetrics ComputeMetrics(const FabricGroups* groups, const std::vector<std::string>& order,
                           const std::vector<std::string>& given) {
  FabricGroups none;
  const FabricGroups& g = groups ? *groups : none;
  std::vector<const HostPlace*> planned = Places(g, order), natural = Places(g, NaturalSorted(order)),
                                user = Places(g, given);
  PlanMetrics metrics;
  for (int level = 1; level <= 1 + g.group_levels; ++level) {
    LevelCrossings c;
    c.level = level;
    c.name = LevelName(level);
    std::vector<long> ids = Ids(planned, level);
    c.crossings = RingCrossings(ids);
    c.lower_bound = RingLowerBound(ids);
    c.hostname_order_crossings = RingCrossings(Ids(natural, level));
    c.given_order_crossings = RingCrossings(Ids(user, level));
    c.tree_crossings = TreeCrossings(ids);
    c.tree_lower_bound = TreeLowerBound(ids);
    c.hostname_order_tree_crossings = TreeCrossings(Ids(natural, level));
    c.given_order_tree_crossings = TreeCrossings(Ids(user, level));
    metrics.levels.push_back(c);
  }
  const LevelCrossings& leaf = metrics.levels.front();
  metrics.ring_leaf_crossings = leaf.crossings;
  metrics.ring_leaf_crossings_lower_bound = leaf.lower_bound;
  metrics.hostname_order_ring_leaf_crossings = leaf.hostname_order_crossings;
  metrics.given_order_ring_leaf_crossings = leaf.given_order_crossings;
  return metrics;
}

}  // namespace topolaunch
