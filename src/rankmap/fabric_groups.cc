// Computing the groups (see fabric_groups.h for the definitions).
//
// Upward reach: from each leaf, walk links to switches exactly one level
// higher, recording every switch reached per level. A union-find over leaf
// indices then joins, level by level, the leaves that reach a common switch
// of that level; it is never reset between levels, so the groups nest.
// Cost: O(leaves x switches reached) -- a few hundred thousand steps on a
// 12,500-host fabric.
#include "rankmap/fabric_groups.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

namespace topolaunch {

namespace {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(size_t a, size_t b) {
    a = Find(a), b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // smallest index is the root
  }

 private:
  std::vector<size_t> parent_;
};

struct SwitchGraph {
  std::map<Guid, int> level;
  std::map<Guid, std::vector<Guid>> up;  // neighbours exactly one level higher
};

SwitchGraph BuildSwitchGraph(const Topology& topology) {
  SwitchGraph g;
  for (const TopologySwitch& s : topology.switches) g.level[s.guid] = s.level;
  for (const TopologyLink& link : topology.links) {
    auto a = g.level.find(link.from.node_guid), b = g.level.find(link.to.node_guid);
    if (a == g.level.end() || b == g.level.end() || a->second < 1 || b->second < 1) continue;
    if (b->second == a->second + 1) g.up[a->first].push_back(b->first);
    if (a->second == b->second + 1) g.up[b->first].push_back(a->first);
  }
  return g;
}

// Places of the hosts, with rails in (device, guid, port) order.
void PlaceHosts(const Topology& topology, const std::map<Guid, int>& level, FabricGroups& out) {
  for (const TopologyHost& host : topology.hosts) {
    std::vector<const HcaAttachment*> hcas;
    for (const HcaAttachment& hca : host.hcas) hcas.push_back(&hca);
    std::sort(hcas.begin(), hcas.end(), [](const HcaAttachment* a, const HcaAttachment* b) {
      if (a->device != b->device) return NaturalLess(a->device, b->device);
      return std::pair(a->guid, a->port) < std::pair(b->guid, b->port);
    });
    HostPlace place;
    for (const HcaAttachment* hca : hcas) {
      auto it = hca->switch_guid ? level.find(*hca->switch_guid) : level.end();
      bool on_leaf = it != level.end() && it->second == 1;
      place.rail_leaves.push_back(on_leaf ? *hca->switch_guid : 0);
      place.rail_devices.push_back(hca->device);
      if (on_leaf) place.leaves.push_back(*hca->switch_guid);
    }
    if (place.leaves.empty()) continue;
    place.rail0_leaf = place.leaves.front();
    std::sort(place.leaves.begin(), place.leaves.end());
    place.leaves.erase(std::unique(place.leaves.begin(), place.leaves.end()), place.leaves.end());
    out.hosts.emplace(host.name, std::move(place));
  }
}

}  // namespace

FabricGroups ComputeFabricGroups(const Topology& topology) {
  FabricGroups out;
  SwitchGraph graph = BuildSwitchGraph(topology);
  for (const TopologySwitch& s : topology.switches) out.switch_names[s.guid] = s.name;
  PlaceHosts(topology, graph.level, out);

  std::vector<Guid> leaves;  // ascending GUID, so group ids follow the smallest leaf
  for (const auto& [guid, lvl] : graph.level) if (lvl == 1) leaves.push_back(guid);
  std::unordered_map<Guid, size_t> leaf_index;
  for (size_t i = 0; i < leaves.size(); ++i) leaf_index[leaves[i]] = i;
  int top = 1;
  for (const auto& [guid, lvl] : graph.level) top = std::max(top, lvl);
  out.group_levels = top - 1;

  // reach[level][switch] = leaves reaching it
  std::vector<std::map<Guid, std::vector<size_t>>> reach(top + 1);
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::set<Guid> frontier{leaves[i]};
    for (int lvl = 2; lvl <= top && !frontier.empty(); ++lvl) {
      std::set<Guid> next;
      for (Guid s : frontier) {
        auto it = graph.up.find(s);
        if (it != graph.up.end()) next.insert(it->second.begin(), it->second.end());
      }
      for (Guid s : next) reach[lvl][s].push_back(i);
      frontier = std::move(next);
    }
  }
  UnionFind uf(leaves.size());
  for (const auto& [name, place] : out.hosts)
    for (Guid leaf : place.leaves) uf.Join(leaf_index.at(place.leaves.front()), leaf_index.at(leaf));
  for (int lvl = 2; lvl <= top; ++lvl) {
    for (const auto& [sw, members] : reach[lvl])
      for (size_t m : members) uf.Join(members.front(), m);
    std::map<size_t, int> dense;  // root (smallest leaf index) -> id
    for (size_t i = 0; i < leaves.size(); ++i) dense.emplace(uf.Find(i), static_cast<int>(dense.size()));
    for (auto& [name, place] : out.hosts) place.groups.push_back(dense.at(uf.Find(leaf_index.at(place.leaves.front()))));
    out.group_counts.push_back(static_cast<int>(dense.size()));
  }
  std::map<std::vector<Guid>, int> leaf_group_ids;  // numbered by leaf set, so independent of hash order
  for (const auto& [name, place] : out.hosts)
    if (!leaf_group_ids.contains(place.leaves)) leaf_group_ids.emplace(place.leaves, 0);
  for (auto& [leaves, id] : leaf_group_ids) id = out.leaf_groups++;
  for (auto& [name, place] : out.hosts) place.leaf_group = leaf_group_ids.find(place.leaves)->second;
  out.nvlink = ComputeNvlinkDomains(topology);
  return out;
}

std::string LevelName(int level) {
  if (level == 1) return "leaf";
  if (level == 2) return "spine_group";
  return fmt::format("level{}_group", level);
}

std::vector<Rail> DescribeRails(const FabricGroups& groups, const std::vector<std::string>& hosts) {
  bool multi = false;
  size_t rails = 0;
  for (const std::string& host : hosts) {
    auto it = groups.hosts.find(host);
    if (it == groups.hosts.end()) continue;
    multi = multi || it->second.leaves.size() > 1;
    rails = std::max(rails, it->second.rail_leaves.size());
  }
  if (!multi) return {};
  std::vector<Rail> out(rails);
  std::vector<std::set<Guid>> leaves(rails);
  std::vector<std::set<std::string>> devices(rails);
  for (const std::string& host : hosts) {
    auto it = groups.hosts.find(host);
    if (it == groups.hosts.end()) continue;
    for (size_t k = 0; k < it->second.rail_leaves.size(); ++k) {
      if (it->second.rail_leaves[k] != 0) leaves[k].insert(it->second.rail_leaves[k]);
      if (!it->second.rail_devices[k].empty()) devices[k].insert(it->second.rail_devices[k]);
    }
  }
  for (size_t k = 0; k < rails; ++k) {
    out[k].index = static_cast<int>(k);
    out[k].leaves.assign(leaves[k].begin(), leaves[k].end());
    out[k].devices.assign(devices[k].begin(), devices[k].end());
  }
  return out;
}

}  // namespace topolaunch
