// Port states, cables expected but missing, and host-level fabric facts.
//
// A port in Init or Armed has a physical link but no working logical one:
// traffic does not pass. When most ports are so, the cause is one (no
// subnet manager), and one critical finding says that instead of listing
// every port. Expected cables come from a baseline topology.json: a cable in
// it that the fabric no longer has is down (or moved), named by the baseline
// because the fabric may no longer know the node at all.
#include <map>
#include <set>

#include <fmt/format.h>

#include "audit/audit_fabric_checks.h"
#include "audit/audit_host_kinds.h"
#include "audit/audit_port_naming.h"

namespace topolaunch {

std::vector<Finding> CheckPortStates(const Fabric& fabric, const Topology& topology) {
  PortNaming naming(topology);
  std::vector<Finding> out;
  int with_state = 0, not_active = 0;
  for (const FabricNode& node : fabric.nodes)
    for (const FabricPort& port : node.ports) {
      if (port.state.empty() || port.state == "Down") continue;
      ++with_state;
      if (port.state == "Active") continue;
      ++not_active;
      Finding f = naming.ForPort({node.guid, port.number}, port.remote);
      // Each cable once: the switch end speaks for both when both are Init.
      if (f.switch_guid && *f.switch_guid != node.guid) {
        const FabricNode* sw = fabric.FindNode(*f.switch_guid);
        const FabricPort* sp = sw ? sw->FindPort(*f.port) : nullptr;
        if (sp && sp->state != "Active") continue;
      }
      f.check = "port_state";
      f.severity = Severity::kError;
      f.message = fmt::format("port {} is physically up but {}, not Active", naming.Describe({node.guid, port.number}),
                              port.state);
      f.reasons.push_back(fmt::format("PortState {}: the subnet manager has not (fully) configured it", port.state));
      out.push_back(std::move(f));
    }
  if (with_state >= 4 && 2 * not_active > with_state) {
    Finding f;
    f.check = "port_state";
    f.severity = Severity::kCritical;
    f.message = fmt::format("{} of {} linked ports are not Active: no subnet manager seems to run on this fabric",
                            not_active, with_state);
    f.reasons.push_back("start a subnet manager (opensm) or check that it runs and sweeps");
    return {std::move(f)};
  }
  return out;
}

std::vector<Finding> CheckExpectedLinks(const Fabric& fabric, const Topology& expected) {
  PortNaming naming(expected);
  std::set<std::pair<PortRef, PortRef>> now;
  for (const FabricNode& node : fabric.nodes)
    for (const FabricPort& port : node.ports)
      if (port.remote && port.state != "Down") {
        PortRef self{node.guid, port.number};
        now.insert(self < *port.remote ? std::pair(self, *port.remote) : std::pair(*port.remote, self));
      }
  std::vector<Finding> out;
  for (const TopologyLink& link : expected.links) {
    auto key = link.from < link.to ? std::pair(link.from, link.to) : std::pair(link.to, link.from);
    if (now.count(key)) continue;
    Finding f = naming.ForLink(link.from, link.to);
    f.check = "link_down";
    f.severity = Severity::kError;
    f.message = fmt::format("expected cable {} <-> {} is not up", naming.Describe(link.from), naming.Describe(link.to));
    for (const PortRef& end : {link.from, link.to}) {
      const FabricNode* node = fabric.FindNode(end.node_guid);
      const FabricPort* port = node ? node->FindPort(end.port) : nullptr;
      if (!node) {
        f.reasons.push_back(fmt::format("{} is no longer in the fabric", naming.Describe(end)));
      } else if (port && port->remote) {
        f.reasons.push_back(fmt::format("{} is now cabled to {}", naming.Describe(end), naming.Describe(*port->remote)));
      } else {
        f.reasons.push_back(fmt::format("{} has no link{}", naming.Describe(end),
                                        port && !port->state.empty() ? " (state " + port->state + ")" : ""));
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

bool ActivePort(const Fabric& fabric, const HcaAttachment& hca) {
  if (!hca.switch_guid) return false;
  const FabricNode* node = fabric.FindNode(hca.guid);
  const FabricPort* port = node ? node->FindPort(hca.port) : nullptr;
  return port && (port->state.empty() || port->state == "Active");
}

Severity UnmappedSeverity(const UnmappedCa& ca) {
  bool never_a_host = ca.reason.find("SHARP") != std::string::npos || ca.reason.find("management") != std::string::npos;
  return never_a_host ? Severity::kInfo : Severity::kWarning;
}

// Each kind of host (audit_host_kinds.h) against its own majority.
void CheckRailCounts(const Fabric& fabric, const Topology& topology, std::vector<Finding>& out) {
  struct Kind {
    std::vector<std::pair<const TopologyHost*, int>> hosts;  // host, active HCA ports
    std::map<int, int> hosts_with;
  };
  std::map<std::string, Kind> kinds;
  for (const TopologyHost& host : topology.hosts) {
    if (host.hcas.empty()) continue;  // a layout-only host
    int n = 0;
    for (const HcaAttachment& hca : host.hcas) n += ActivePort(fabric, hca) ? 1 : 0;
    Kind& kind = kinds[HostKind(host.name)];
    kind.hosts.emplace_back(&host, n);
    ++kind.hosts_with[n];
  }
  for (const auto& [name, kind] : kinds) {
    int total = static_cast<int>(kind.hosts.size());
    if (total < kMinHostsOfAKind) continue;
    for (const auto& [count, hosts] : kind.hosts_with) {
      if (2 * hosts <= total) continue;
      for (const auto& [host, active] : kind.hosts) {
        if (active >= count) continue;
        Finding f;
        f.check = "host_rail_count";
        f.severity = Severity::kError;
        f.host = host->name;
        f.message = fmt::format("{} has {} active HCA port{}, the other {} hosts have {}", host->name, active,
                                active == 1 ? "" : "s", name, count);
        f.reasons.push_back(fmt::format("{} of the {} hosts named {} have {} active HCA ports", hosts, total, name,
                                        count));
        out.push_back(std::move(f));
      }
    }
  }
}

}  // namespace

std::vector<Finding> CheckHosts(const Fabric& fabric, const Topology& topology) {
  std::vector<Finding> out;
  CheckRailCounts(fabric, topology, out);
  for (const UnmappedCa& ca : topology.unmapped) {
    Finding f;
    bool os_default = ca.reason.starts_with(kOsDefaultHostName);
    f.check = os_default ? "default_node_description" : "unmapped_ca";
    f.severity = UnmappedSeverity(ca);
    f.message = fmt::format("CA {} \"{}\" could not be mapped to a host", FormatGuid(ca.guid), ca.description);
    f.reasons.push_back(ca.reason);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace topolaunch
