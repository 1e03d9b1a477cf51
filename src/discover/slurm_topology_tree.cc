// The tree topology.conf describes, from the fabric.
//
// Leaves. A leaf is a switch hosts hang on (BuildTopology's level 1), unless
// it is a switch above leaves that carries a few hosts of its own (a spine
// with two storage servers): judged by what hangs below it, a switch is above
// the leaves when it joins at least two switches with more of the written
// hosts than it has, joins them with more cables than it has to its own
// hosts, and no two of those switches are cabled to each other (so they are
// leaves that meet only through it and its peers, not a mesh of leaves).
// Left a leaf, such a spine would be a peer of the leaves under it and split
// the tree. Its own hosts are left out and named in a comment; `--slurm-nodes`
// chooses the hosts exactly.
//
// Levels above are 1 + the hop distance to the nearest leaf; the children of
// a level-L switch are the level-(L-1) switches it is cabled to. Slurm works
// out levels itself and refuses (fatal) a switch defined twice, a child it
// does not know and a line with neither nodes nor switches, so leaves without
// written hosts are left out, and so is every switch above whose children
// were all left out.
//
// Hosts with HCAs on several leaves (multi-rail, dual-homed). In Slurm 22.05
// each leaf's node set is what best-fit scheduling counts; a node on two
// leaves is counted on both -- it looks free on each -- and slurmctld logs
// "WARNING: Multiple leaf switches contain nodes" at every start
// (src/plugins/topology/tree). So each host is listed once, under its "home"
// leaf: the leaf of its first cabled HCA port in rail order (RDMA device name
// in natural order, mlx5_0 before mlx5_1, then port; HCAs without a device
// name after those, by GUID). On a rail-optimized fabric the rail-0 leaves
// split the hosts into exactly the units all rails do, and the spines of
// rail 0 join them; the other rails' leaves end up without hosts and are left
// out. (One pseudo-switch per set of leaves was the alternative: there a
// single unplugged cable would move a host into a switch of its own.)
//
// Merging. Upper switches with the same children (the spines of one plane
// all see the same leaves) are one line, as Slurm's topology guide advises:
// Slurm gains nothing from the copies and scans each. The line keeps the
// first name in natural order; a comment says how many it stands for.
//
// A root. Slurm runs no job across switches without a common parent
// ("no switch can reach all nodes through its descendants"). Leaves cabled
// directly to each other, rails joined only in the hosts, or spine planes
// that meet nowhere leave several tops: a switch "root" (the name made
// unique) is added above them, as topograph does.
//
// Names: see slurm_switch_names.h; they are chosen among the switches that
// are written, so that a name is only made longer when two written switches
// share it.
#include "discover/slurm_topology_tree.h"

#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "discover/slurm_switch_names.h"

namespace topolaunch {

namespace {

bool RailLess(const HcaAttachment& a, const HcaAttachment& b) {
  if (a.device.empty() != b.device.empty()) return b.device.empty();
  if (a.device != b.device) return NaturalLess(a.device, b.device);
  return std::pair(a.guid, a.port) < std::pair(b.guid, b.port);
}

void SortNatural(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
}

// What the fabric says, reduced to what the tree needs.
struct FabricView {
  std::map<Guid, const TopologySwitch*> switches;
  std::map<Guid, std::map<Guid, int>> cables;  // switch -> neighbour switch -> cables
  std::map<Guid, std::set<size_t>> hosts_on;   // switch -> written hosts (index) cabled to it
  std::map<Guid, int> host_cables;             // switch -> cables to written hosts
};

bool Selected(const SlurmTreeOptions& options, const TopologyHost& host) {
  return !options.nodes || options.nodes->contains(host.name);
}

FabricView ViewOf(const Topology& topology, const SlurmTreeOptions& options) {
  FabricView view;
  for (const TopologySwitch& s : topology.switches) view.switches[s.guid] = &s;
  for (const TopologyLink& link : topology.links) {
    Guid a = link.from.node_guid, b = link.to.node_guid;
    if (a == b || !view.switches.contains(a) || !view.switches.contains(b)) continue;
    ++view.cables[a][b];
    ++view.cables[b][a];
  }
  for (size_t i = 0; i < topology.hosts.size(); ++i) {
    if (!Selected(options, topology.hosts[i])) continue;
    for (const HcaAttachment& hca : topology.hosts[i].hcas) {
      if (!hca.switch_guid || !view.switches.contains(*hca.switch_guid)) continue;
      view.hosts_on[*hca.switch_guid].insert(i);
      ++view.host_cables[*hca.switch_guid];
    }
  }
  return view;
}

size_t HostsOn(const FabricView& view, Guid s) {
  auto it = view.hosts_on.find(s);
  return it == view.hosts_on.end() ? 0 : it->second.size();
}

int Cables(const FabricView& view, Guid a, Guid b) {
  auto it = view.cables.find(a);
  if (it == view.cables.end()) return 0;
  auto to = it->second.find(b);
  return to == it->second.end() ? 0 : to->second;
}

// See "Leaves" at the top of the file.
bool AboveTheLeaves(const FabricView& view, Guid s) {
  auto neighbours = view.cables.find(s);
  if (neighbours == view.cables.end()) return false;
  size_t own = HostsOn(view, s);
  std::vector<Guid> bigger;
  int cables_to_bigger = 0;
  for (const auto& [peer, cables] : neighbours->second)
    if (HostsOn(view, peer) > own) {
      bigger.push_back(peer);
      cables_to_bigger += cables;
    }
  if (bigger.size() < 2) return false;
  auto host_cables = view.host_cables.find(s);
  if (cables_to_bigger <= (host_cables == view.host_cables.end() ? 0 : host_cables->second)) return false;
  for (size_t i = 0; i < bigger.size(); ++i)
    for (size_t j = i + 1; j < bigger.size(); ++j)
      if (Cables(view, bigger[i], bigger[j]) > 0) return false;
  return true;
}

// Levels: 1 for the leaves, then breadth first over switch cables.
std::map<Guid, int> TreeLevels(const FabricView& view) {
  std::map<Guid, int> levels;
  std::deque<Guid> queue;
  for (const auto& [guid, s] : view.switches)
    if (s->level == 1 && !AboveTheLeaves(view, guid)) {
      levels[guid] = 1;
      queue.push_back(guid);
    }
  while (!queue.empty()) {
    Guid at = queue.front();
    queue.pop_front();
    auto neighbours = view.cables.find(at);
    if (neighbours == view.cables.end()) continue;
    for (const auto& [peer, cables] : neighbours->second)
      if (levels.emplace(peer, levels[at] + 1).second) queue.push_back(peer);
  }
  return levels;
}

struct Node {
  int level = 1;
  std::vector<std::string> hosts;  // leaves
  std::set<Guid> children;         // above
  size_t stands_for = 1;
};

Status PlaceHosts(const Topology& topology, const SlurmTreeOptions& options, const std::map<Guid, int>& levels,
                  std::map<Guid, Node>& nodes, SlurmTree& tree) {
  std::set<std::string> cabled_names;
  for (const TopologyHost& host : topology.hosts) {
    std::vector<const HcaAttachment*> on_leaves;
    bool cabled = false;
    for (const HcaAttachment& hca : host.hcas) {
      auto level = hca.switch_guid ? levels.find(*hca.switch_guid) : levels.end();
      if (level == levels.end()) continue;
      cabled = true;
      if (level->second == 1) on_leaves.push_back(&hca);
    }
    if (!cabled) continue;
    cabled_names.insert(host.name);
    if (!Selected(options, host)) {
      ++tree.not_selected;
      continue;
    }
    if (on_leaves.empty()) {
      tree.above_leaves.push_back(host.name);
      continue;
    }
    if (!IsValidHostName(host.name))  // '#', ',' or '=' would break the file
      return Error(ErrorCode::kBadInput, fmt::format("host \"{}\"", host.name),
                   "not a host name Slurm can read in topology.conf");
    std::set<Guid> leaves;
    for (const HcaAttachment* hca : on_leaves) leaves.insert(*hca->switch_guid);
    auto home = std::min_element(on_leaves.begin(), on_leaves.end(),
                                 [](const HcaAttachment* a, const HcaAttachment* b) { return RailLess(*a, *b); });
    nodes[*(*home)->switch_guid].hosts.push_back(host.name);
    ++tree.hosts;
    if (leaves.size() > 1) ++tree.multi_homed;
  }
  if (options.nodes)
    for (const std::string& name : *options.nodes)
      if (!cabled_names.contains(name)) tree.selected_missing.push_back(name);
  SortNatural(tree.above_leaves);
  SortNatural(tree.selected_missing);
  return Ok{};
}

// Bottom up: a switch is written when one of its children is.
void AddUpperLevels(const FabricView& view, const std::map<Guid, int>& levels, std::map<Guid, Node>& nodes) {
  int top = 1;
  for (const auto& [guid, level] : levels) top = std::max(top, level);
  for (int level = 2; level <= top; ++level)
    for (const auto& [guid, l] : levels) {
      if (l != level || !view.cables.contains(guid)) continue;
      Node node{level, {}, {}, 1};
      for (const auto& [peer, cables] : view.cables.at(guid)) {
        auto child = nodes.find(peer);
        if (child != nodes.end() && child->second.level == level - 1) node.children.insert(peer);
      }
      if (!node.children.empty()) nodes[guid] = std::move(node);
    }
}

// See "Merging" at the top of the file.
size_t MergeSameChildren(std::map<Guid, Node>& nodes, const std::map<Guid, std::string>& names) {
  std::map<Guid, Guid> kept_for;  // merged-away switch -> the one whose line holds it
  size_t merged = 0;
  int top = 1;
  for (const auto& [guid, node] : nodes) top = std::max(top, node.level);
  for (int level = 2; level <= top; ++level) {
    std::map<std::set<Guid>, Guid> first_with;
    std::vector<Guid> at_level;
    for (auto& [guid, node] : nodes) {
      if (node.level != level) continue;
      std::set<Guid> children;
      for (Guid child : node.children) children.insert(kept_for.contains(child) ? kept_for[child] : child);
      node.children = std::move(children);
      at_level.push_back(guid);
    }
    std::sort(at_level.begin(), at_level.end(),
              [&](Guid a, Guid b) { return NaturalLess(names.at(a), names.at(b)); });
    for (Guid guid : at_level) {
      auto [kept, fresh] = first_with.emplace(nodes[guid].children, guid);
      if (fresh) continue;
      kept_for[guid] = kept->second;
      nodes[kept->second].stands_for += nodes[guid].stands_for;
      ++merged;
    }
    for (const auto& [away, kept] : kept_for) nodes.erase(away);
  }
  return merged;
}

std::string RootName(const std::map<Guid, std::string>& names) {
  std::set<std::string> taken;
  for (const auto& [guid, name] : names) taken.insert(name);
  std::string name = "root";
  for (int i = 1; taken.contains(name); ++i) name = fmt::format("root-{}", i);
  return name;
}

Error NothingToWrite(const Topology& topology, const SlurmTree& tree) {
  std::string why = "nothing to write: the fabric has no leaf switch with hosts (topology.conf would be empty)";
  if (tree.not_selected > 0)
    why += fmt::format("; --slurm-nodes matches none of the {} cabled hosts", tree.not_selected);
  if (!topology.unmapped.empty())
    why += fmt::format("; {} CAs have no host name (`discover --format text` says why; --node-name-map names them)",
                       topology.unmapped.size());
  return Error(ErrorCode::kBadInput, "topology", why);
}

}  // namespace

Result<SlurmTree> BuildSlurmTree(const Topology& topology, const SlurmTreeOptions& options) {
  FabricView view = ViewOf(topology, options);
  std::map<Guid, int> levels = TreeLevels(view);
  SlurmTree tree;
  std::map<Guid, Node> nodes;
  if (Status placed = PlaceHosts(topology, options, levels, nodes, tree); !placed.ok()) return placed.take_error();
  if (nodes.empty()) return NothingToWrite(topology, tree);
  AddUpperLevels(view, levels, nodes);

  std::vector<const TopologySwitch*> written;
  for (const auto& [guid, node] : nodes) written.push_back(view.switches.at(guid));
  std::map<Guid, std::string> names = SlurmSwitchNames(written);
  tree.merged_away = MergeSameChildren(nodes, names);

  std::set<Guid> children;
  int top = 1;
  for (const auto& [guid, node] : nodes) {
    children.insert(node.children.begin(), node.children.end());
    top = std::max(top, node.level);
  }
  for (const auto& [guid, node] : nodes) {
    SlurmSwitchLine line{names.at(guid), node.level, node.hosts, node.stands_for, false};
    for (Guid child : node.children) line.members.push_back(names.at(child));
    SortNatural(line.members);
    tree.lines.push_back(std::move(line));
  }
  std::vector<std::string> tops;
  for (const auto& [guid, node] : nodes)
    if (!children.contains(guid)) tops.push_back(names.at(guid));
  if (tops.size() > 1) {
    SortNatural(tops);
    tree.lines.push_back(SlurmSwitchLine{RootName(names), top + 1, std::move(tops), 0, true});
  }
  std::sort(tree.lines.begin(), tree.lines.end(), [](const SlurmSwitchLine& a, const SlurmSwitchLine& b) {
    if (a.level != b.level) return a.level < b.level;
    return NaturalLess(a.name, b.name);
  });
  return tree;
}

}  // namespace topolaunch
