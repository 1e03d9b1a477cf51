#include "audit/audit_port_naming.h"

#include <fmt/format.h>

namespace topolaunch {

PortNaming::PortNaming(const Topology& topology) {
  for (const TopologySwitch& s : topology.switches) switches_[s.guid] = s.name;
  for (const TopologyHost& h : topology.hosts)
    for (const HcaAttachment& a : h.hcas) cas_[a.guid] = {h.name, a.device};
  for (const UnmappedCa& u : topology.unmapped) unmapped_[u.guid] = u.description;
}

std::string PortNaming::HostOf(Guid guid) const {
  auto it = cas_.find(guid);
  return it == cas_.end() ? "" : it->second.host;
}

FindingPeer PortNaming::Peer(const PortRef& port) const {
  FindingPeer peer;
  peer.guid = port.node_guid;
  peer.port = port.port;
  if (auto s = switches_.find(port.node_guid); s != switches_.end()) {
    peer.kind = "switch";
    peer.name = s->second;
  } else if (auto c = cas_.find(port.node_guid); c != cas_.end()) {
    peer.kind = "host";
    peer.name = c->second.host;
    peer.device = c->second.device;
  } else {
    peer.kind = "ca";
    if (auto u = unmapped_.find(port.node_guid); u != unmapped_.end()) peer.name = u->second;
  }
  return peer;
}

std::string PortNaming::Describe(const PortRef& port) const {
  FindingPeer p = Peer(port);
  std::string name = p.name.empty() ? FormatGuid(p.guid) : p.name;
  if (!p.device.empty()) name += " " + p.device;
  return fmt::format("{} port {}", name, p.port);
}

Finding PortNaming::ForPort(const PortRef& port, const std::optional<PortRef>& remote) const {
  Finding f;
  FindingPeer self = Peer(port);
  if (self.kind == "switch") {
    f.switch_guid = port.node_guid;
    f.switch_name = self.name;
    f.port = port.port;
    if (remote) {
      f.peer = Peer(*remote);
      if (f.peer->kind == "host") f.host = f.peer->name;
    }
    return f;
  }
  // A CA port: name it from the switch side when it is cabled to one.
  if (remote && IsSwitch(remote->node_guid)) {
    f = ForPort(*remote, port);
    return f;
  }
  f.host = self.kind == "host" ? self.name : "";
  f.port = port.port;
  if (remote) f.peer = Peer(*remote);
  return f;
}

Finding PortNaming::ForLink(const PortRef& a, const PortRef& b) const {
  if (!IsSwitch(a.node_guid) && IsSwitch(b.node_guid)) return ForPort(b, a);
  return ForPort(a, b);
}

}  // namespace topolaunch
