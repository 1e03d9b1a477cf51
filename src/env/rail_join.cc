#include "env/rail_join.h"

#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>

#include "env/compute_ports.h"

namespace topolaunch {

namespace {

struct Rail {
  std::set<Guid> leaves;
  std::set<Guid> spines;   // level-2 switches cabled to the leaves
  double up = 0;           // Gb/s, leaves -> spines
  double onward = 0;       // Gb/s, spines -> level 3 and above
};

std::string RailKey(const TopologyHost& host, const HcaAttachment& hca) {
  return fmt::format("{}:{}", DeviceOf(host, hca), hca.port);
}

// True when a switch path joins `a` and `b` at all.
bool Connected(const std::map<Guid, std::set<Guid>>& neighbours, Guid a, Guid b) {
  std::set<Guid> seen{a};
  std::deque<Guid> queue{a};
  while (!queue.empty()) {
    Guid at = queue.front();
    queue.pop_front();
    if (at == b) return true;
    auto it = neighbours.find(at);
    if (it == neighbours.end()) continue;
    for (Guid next : it->second)
      if (seen.insert(next).second) queue.push_back(next);
  }
  return false;
}

}  // namespace

RailJoin JudgeRailJoin(const Topology& topology) {
  std::map<Guid, int> level;
  for (const TopologySwitch& s : topology.switches) level[s.guid] = s.level;
  std::map<std::string, Rail> rails;
  std::map<Guid, std::string> rail_of_leaf;
  for (const TopologyHost& host : topology.hosts)
    for (const HcaAttachment& hca : host.hcas)
      if (hca.switch_guid && level[*hca.switch_guid] == 1) {
        std::string key = RailKey(host, hca);
        rails[key].leaves.insert(*hca.switch_guid);
        rail_of_leaf[*hca.switch_guid] = key;
      }
  if (rails.size() < 2) return {false, "one rail"};

  std::map<Guid, std::set<Guid>> neighbours;
  bool rates_known = true;
  for (const TopologyLink& link : topology.links) {
    Guid a = link.from.node_guid, b = link.to.node_guid;
    if (!level.contains(a) || !level.contains(b) || a == b) continue;
    neighbours[a].insert(b);
    neighbours[b].insert(a);
    std::optional<double> rate = LinkRateGbps(link.width, link.speed);
    if (!rate) rates_known = false;
    for (auto [low, high] : {std::pair{a, b}, std::pair{b, a}}) {
      auto leaf = rail_of_leaf.find(low);
      if (leaf != rail_of_leaf.end() && level[high] == 2) {
        Rail& rail = rails[leaf->second];
        rail.spines.insert(high);
        rail.up += rate.value_or(0);
      }
    }
  }
  for (const TopologyLink& link : topology.links) {
    Guid a = link.from.node_guid, b = link.to.node_guid;
    if (!level.contains(a) || !level.contains(b)) continue;
    for (auto [low, high] : {std::pair{a, b}, std::pair{b, a}})
      if (level[low] == 2 && level[high] >= 3)
        for (auto& [key, rail] : rails)
          if (rail.spines.contains(low)) rail.onward += LinkRateGbps(link.width, link.speed).value_or(0);
  }

  for (auto r = rails.begin(); r != rails.end(); ++r)
    for (auto s = std::next(r); s != rails.end(); ++s) {
      bool share = false;
      for (Guid spine : r->second.spines) share = share || s->second.spines.contains(spine);
      if (share) continue;
      if (!Connected(neighbours, *r->second.leaves.begin(), *s->second.leaves.begin()))
        return {true, fmt::format("rails {} and {} are not joined at all (separate planes or subnets)", r->first,
                                  s->first)};
      if (!rates_known) return {false, "the rails meet above their spines; link rates unknown, not judged"};
      for (const auto* rail : {&*r, &*s})
        if (rail->second.onward < rail->second.up)
          return {true, fmt::format("rail {}'s spines send {:g} Gb/s on toward the other rails for the {:g} Gb/s "
                                    "its leaves send up",
                                    rail->first, rail->second.onward, rail->second.up)};
    }
  return {false, "the rails meet at full bandwidth (a shared spine, or a level above that takes what the leaves send)"};
}

}  // namespace topolaunch
