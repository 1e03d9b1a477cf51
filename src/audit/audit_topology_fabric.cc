// A topology.json turned back into a fabric, for `audit --topology FILE`.
#include <algorithm>
#include <map>

#include "audit/audit_pipeline.h"

namespace topolaunch {

Fabric FabricFromTopology(const Topology& topology) {
  std::map<Guid, FabricNode> nodes;
  for (const TopologySwitch& s : topology.switches) {
    FabricNode& n = nodes[s.guid];
    n.type = NodeType::kSwitch;
    n.guid = s.guid;
    n.description = s.name;
    n.num_ports = s.ports;
  }
  for (const TopologyHost& h : topology.hosts)
    for (const HcaAttachment& a : h.hcas) {
      FabricNode& n = nodes[a.guid];
      n.type = NodeType::kCa;
      n.guid = a.guid;
      n.description = a.description;
      n.num_ports = std::max(n.num_ports, a.port);
    }
  for (const UnmappedCa& u : topology.unmapped) {
    FabricNode& n = nodes[u.guid];
    n.guid = u.guid;
    n.description = u.description;
  }
  for (const TopologyLink& l : topology.links)
    for (auto [self, other] : {std::pair(l.from, l.to), std::pair(l.to, l.from)}) {
      auto it = nodes.find(self.node_guid);
      if (it == nodes.end()) continue;
      FabricPort port;
      port.number = self.port;
      port.width = l.width;
      port.speed = l.speed;
      port.state = l.state;
      port.remote = other;
      it->second.ports.push_back(std::move(port));
    }
  Fabric fabric;
  fabric.source = topology.generated.fabric_source;
  for (auto& [guid, node] : nodes) {
    std::sort(node.ports.begin(), node.ports.end(), [](const FabricPort& a, const FabricPort& b) { return a.number < b.number; });
    fabric.nodes.push_back(std::move(node));
  }
  return fabric;
}

}  // namespace topolaunch
