// From a raw fabric to the topology model.
//
// 1. Every CA is named: the node-name-map wins, else the first word of its
//    NodeDescription ("%h %d"). A CA whose name cannot be a host (firmware
//    default, SHARP aggregation node, switch management port) goes to
//    `unmapped` with the reason; nothing is silently dropped.
// 2. CAs with the same host name are one host: a multi-rail node has one HCA
//    per rail, a dual-homed HCA has two ports on two switches. Each cabled
//    port is one attachment.
// 3. Switch levels: a leaf (level 1) has at least one compute CA attached --
//    a named host, or one whose name is only missing (firmware default): it
//    is still a compute node. Upper levels are 1 + the hop distance to the
//    nearest leaf over switch-to-switch cables (breadth-first search).
//    Switches with no path to a leaf get level 0.
// 4. Each cable appears once in `links`, from its smaller (guid, port) end.
//    A cable to a node the fabric does not hold is left out (the parsers
//    already reject such input; live walks never produce it).
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

// NodeDescription is a fixed 64-byte field: sources differ in whether they
// keep its padding (a text dump keeps " ", libibnetdisc strips it), so the
// model never does.
std::string CleanDescription(std::string_view text) {
  size_t end = text.find_last_not_of(std::string_view(" \t\0", 3));
  return end == std::string_view::npos ? std::string() : std::string(text.substr(0, end + 1));
}

enum class CaRole { kHost, kUnnamedComputeNode, kNotAHost };

struct CaIdentity {
  CaRole role = CaRole::kNotAHost;
  std::string host;     // for kHost
  std::string reason;   // for the others
};

std::string_view WordAt(std::string_view text, int index) {
  size_t pos = 0;
  for (int i = 0;; ++i) {
    size_t b = text.find_first_not_of(" \t", pos);
    if (b == std::string_view::npos) return {};
    size_t e = text.find_first_of(" \t", b);
    if (i == index) return text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    if (e == std::string_view::npos) return {};
    pos = e;
  }
}

// "mlx5_0", "mlx4_1", "hfi1_0", "irdma0": the kernel's RDMA device name, which
// NCCL_IB_HCA needs. "HCA-1" (a site's own label) is not one.
bool LooksLikeRdmaDevice(std::string_view word) {
  if (word.empty() || !std::isalpha(static_cast<unsigned char>(word[0]))) return false;
  bool digit = false;
  for (char c : word) {
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (!(std::islower(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return digit;
}

CaIdentity IdentifyCa(const FabricNode& ca, const NodeNameMap& name_map) {
  CaIdentity id;
  auto mapped = name_map.find(ca.guid);
  std::string_view description = mapped != name_map.end() ? std::string_view(mapped->second) : ca.description;
  if (std::optional<std::string> why = WhyNotAHostDescription(description)) {
    bool firmware = why->starts_with("firmware default") || why->starts_with("empty");
    id.role = firmware ? CaRole::kUnnamedComputeNode : CaRole::kNotAHost;
    id.reason = mapped != name_map.end() ? "node-name-map entry: " + *why : *why;
    return id;
  }
  id.role = CaRole::kHost;
  id.host = std::string(WordAt(description, 0));
  return id;
}

using NodesByGuid = std::unordered_map<Guid, const FabricNode*>;

HcaAttachment MakeAttachment(const FabricNode& ca, const FabricPort* port, int number, const NodesByGuid& by_guid) {
  HcaAttachment a;
  a.guid = ca.guid;
  a.description = CleanDescription(ca.description);
  std::string_view second = WordAt(ca.description, 1);
  if (LooksLikeRdmaDevice(second)) a.device = std::string(second);
  a.port = number;
  if (!port) return a;
  a.port_guid = port->port_guid;
  a.width = port->width;
  a.speed = port->speed;
  a.rate_gbps = LinkRateGbps(port->width, port->speed);
  if (port->remote) {
    auto peer = by_guid.find(port->remote->node_guid);
    if (peer != by_guid.end() && peer->second->type == NodeType::kSwitch) {
      a.switch_guid = peer->first;
      a.switch_port = port->remote->port;
    }
  }
  return a;
}

std::map<Guid, int> ComputeSwitchLevels(const std::set<Guid>& leaves, const NodesByGuid& by_guid) {
  std::map<Guid, int> level;
  std::deque<Guid> queue;
  for (Guid leaf : leaves) {
    level[leaf] = 1;
    queue.push_back(leaf);
  }
  while (!queue.empty()) {
    Guid guid = queue.front();
    queue.pop_front();
    for (const FabricPort& port : by_guid.at(guid)->ports) {
      if (!port.remote) continue;
      auto peer = by_guid.find(port.remote->node_guid);
      if (peer == by_guid.end() || peer->second->type != NodeType::kSwitch) continue;
      if (level.emplace(peer->first, level[guid] + 1).second) queue.push_back(peer->first);
    }
  }
  return level;
}

std::vector<TopologyLink> CollectLinks(const Fabric& fabric, const NodesByGuid& by_guid) {
  // Every cabled port is one end of a link, seen from its side; sorted by
  // the link, a cable's two ends are neighbours, in the order the nodes
  // list them (a stable sort), and each run of equal keys is one link.
  struct End {
    std::pair<PortRef, PortRef> key;
    bool here_first;
    const FabricPort* port;
  };
  size_t ports = 0;
  for (const FabricNode& node : fabric.nodes) ports += node.ports.size();
  std::vector<End> ends;
  ends.reserve(ports);
  for (const FabricNode& node : fabric.nodes) {
    for (const FabricPort& port : node.ports) {
      if (!port.remote || !by_guid.contains(port.remote->node_guid)) continue;
      PortRef here{node.guid, port.number};
      PortRef there = *port.remote;
      bool here_first = here < there;
      ends.push_back({here_first ? std::pair{here, there} : std::pair{there, here}, here_first, &port});
    }
  }
  std::stable_sort(ends.begin(), ends.end(), [](const End& a, const End& b) { return a.key < b.key; });
  std::vector<TopologyLink> out;
  out.reserve(ends.size() / 2 + 1);
  for (size_t i = 0; i < ends.size(); ++i) {
    if (i == 0 || ends[i].key != ends[i - 1].key) {
      out.emplace_back();
      out.back().from = ends[i].key.first;
      out.back().to = ends[i].key.second;
    }
    TopologyLink& link = out.back();
    const End& end = ends[i];
    // The smaller end's view wins; the other end fills what it left empty.
    if (end.here_first || link.width.empty()) link.width = end.port->width;
    if (end.here_first || link.speed.empty()) link.speed = end.port->speed;
    if (end.here_first || link.state.empty()) link.state = end.port->state;
  }
  return out;
}

}  // namespace

Topology BuildTopology(const Fabric& fabric, const NodeNameMap& name_map, Generated generated) {
  Topology topo;
  topo.generated = std::move(generated);
  NodesByGuid by_guid;
  by_guid.reserve(fabric.nodes.size());
  for (const FabricNode& node : fabric.nodes) by_guid.emplace(node.guid, &node);

  // The CAs that are hosts, by host name in natural order (in fabric order
  // within one name): a run of equal names is one host.
  struct NamedCa {
    std::string host;
    const FabricNode* ca;
  };
  std::vector<NamedCa> named;
  std::set<Guid> leaves;
  for (const FabricNode& node : fabric.nodes) {
    if (node.type != NodeType::kCa) continue;
    CaIdentity id = IdentifyCa(node, name_map);
    if (id.role != CaRole::kNotAHost) {
      for (const FabricPort& port : node.ports) {
        if (!port.remote) continue;
        auto peer = by_guid.find(port.remote->node_guid);
        if (peer != by_guid.end() && peer->second->type == NodeType::kSwitch) leaves.insert(peer->first);
      }
    }
    if (id.role != CaRole::kHost) {
      topo.unmapped.push_back({node.guid, CleanDescription(node.description), id.reason});
      continue;
    }
    named.push_back({std::move(id.host), &node});
  }
  std::stable_sort(named.begin(), named.end(), [](const NamedCa& a, const NamedCa& b) { return NaturalLess(a.host, b.host); });
  topo.hosts.reserve(named.size() + 1);  // + 1: room for this machine's layout (AttachLayout)
  for (size_t first = 0, last; first < named.size(); first = last) {
    for (last = first + 1; last < named.size() && named[last].host == named[first].host;) ++last;
    TopologyHost& host = topo.hosts.emplace_back();
    host.name = std::move(named[first].host);
    for (size_t i = first; i < last; ++i) {
      const FabricNode& node = *named[i].ca;
      if (node.ports.empty()) {
        // An isolated CA: its ports exist but are cabled to nothing.
        for (int p = 1; p <= std::max(node.num_ports, 1); ++p) host.hcas.push_back(MakeAttachment(node, nullptr, p, by_guid));
      }
      for (const FabricPort& port : node.ports) host.hcas.push_back(MakeAttachment(node, &port, port.number, by_guid));
    }
    std::sort(host.hcas.begin(), host.hcas.end(),
              [](const HcaAttachment& a, const HcaAttachment& b) { return std::pair(a.guid, a.port) < std::pair(b.guid, b.port); });
  }

  std::map<Guid, int> levels = ComputeSwitchLevels(leaves, by_guid);
  for (const FabricNode& node : fabric.nodes) {
    if (node.type != NodeType::kSwitch) continue;
    auto mapped = name_map.find(node.guid);
    auto level = levels.find(node.guid);
    topo.switches.push_back({node.guid, mapped != name_map.end() ? mapped->second : CleanDescription(node.description),
                             level == levels.end() ? 0 : level->second, node.num_ports});
  }
  std::sort(topo.switches.begin(), topo.switches.end(), [](const TopologySwitch& a, const TopologySwitch& b) {
    int la = a.level == 0 ? INT32_MAX : a.level, lb = b.level == 0 ? INT32_MAX : b.level;
    if (la != lb) return la < lb;
    if (a.name != b.name) return NaturalLess(a.name, b.name);
    return a.guid < b.guid;
  });
  topo.links = CollectLinks(fabric, by_guid);
  std::sort(topo.unmapped.begin(), topo.unmapped.end(),
            [](const UnmappedCa& a, const UnmappedCa& b) { return a.guid < b.guid; });
  return topo;
}

void AttachLayout(Topology& topology, const std::string& host_name, HostLayout layout) {
  if (TopologyHost* host = topology.FindHost(host_name)) {
    host->layout = std::move(layout);
    return;
  }
  TopologyHost host;
  host.name = host_name;
  host.layout = std::move(layout);
  auto at = std::upper_bound(topology.hosts.begin(), topology.hosts.end(), host_name,
                             [](const std::string& name, const TopologyHost& h) { return NaturalLess(name, h.name); });
  topology.hosts.insert(at, std::move(host));
}

const TopologyHost* Topology::FindHost(std::string_view name) const {
  for (const TopologyHost& h : hosts)
    if (h.name == name) return &h;
  return nullptr;
}

TopologyHost* Topology::FindHost(std::string_view name) {
  for (TopologyHost& h : hosts)
    if (h.name == name) return &h;
  return nullptr;
}

const TopologySwitch* Topology::FindSwitch(Guid guid) const {
  for (const TopologySwitch& s : switches)
    if (s.guid == guid) return &s;
  return nullptr;
}

}  // namespace topolaunch
