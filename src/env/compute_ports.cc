// Compute ports and leaf shapes.
//
// A host often has more RDMA devices than the ones on the compute fabric: a
// storage HCA on another subnet, a management port, a second port left
// uncabled. NCCL would happily use any of them, so NCCL_IB_HCA must name
// exactly the ports the fabric walk found cabled to the compute switches.
// The walk knows CAs by GUID and by node description ("node017 mlx5_0");
// hwloc knows devices by name and, when it could read them, by node GUID.
// A port is on the fabric when the topology lists it with a switch peer; its
// name comes from the description, else from the layout NIC with that GUID.
//
// Rails: on a rail-optimized fabric, device k of every host is cabled to the
// rail-k leaves, so every leaf carries one device name only. On a host whose
// ports all reach one leaf, crossing NICs costs nothing.
#include "env/compute_ports.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace topolaunch {

namespace {

const Nic* LayoutNicByGuid(const TopologyHost& host, Guid guid) {
  if (!host.layout) return nullptr;
  for (const Nic& nic : host.layout->nics)
    if (nic.node_guid && *nic.node_guid == guid) return &nic;
  return nullptr;
}

const Nic* LayoutNicByName(const TopologyHost* host, const std::string& name) {
  if (!host || !host->layout) return nullptr;
  for (const Nic& nic : host->layout->nics)
    if (nic.name == name) return &nic;
  return nullptr;
}

std::string DeviceOf(const TopologyHost& host, const HcaAttachment& hca) {
  if (!hca.device.empty()) return hca.device;
  const Nic* nic = LayoutNicByGuid(host, hca.guid);
  return nic ? nic->name : "";
}

void SortPorts(std::vector<ComputePort>& ports) {
  std::sort(ports.begin(), ports.end(), [](const ComputePort& a, const ComputePort& b) {
    if (a.device != b.device) return NaturalLess(a.device, b.device);
    return a.port < b.port;
  });
}

std::string LeafName(const Topology& topology, Guid guid) {
  const TopologySwitch* sw = topology.FindSwitch(guid);
  return sw && !sw->name.empty() ? sw->name : FormatGuid(guid);
}

}  // namespace

bool FabricUnknownFor(const EnvFacts& facts) {
  const TopologyHost* host = facts.topology ? facts.topology->FindHost(facts.host) : nullptr;
  if (host)
    for (const HcaAttachment& hca : host->hcas)
      if (hca.switch_guid) return false;
  return true;
}

FabricKind DetectFabricKind(const EnvFacts& facts) {
  const TopologyHost* host = facts.topology ? facts.topology->FindHost(facts.host) : nullptr;
  if (!FabricUnknownFor(facts)) return FabricKind::kInfiniband;
  if (facts.rdma_ports && !ActiveInfinibandPorts(*facts.rdma_ports, host).empty()) return FabricKind::kInfiniband;
  if (facts.rdma_ports && !RoceComputePorts(*facts.rdma_ports, host).empty()) return FabricKind::kRoce;
  return FabricKind::kTcp;
}

std::vector<ComputePort> InfinibandComputePorts(const Topology& topology, const TopologyHost& host,
                                                std::vector<std::string>* left_out) {
  std::vector<ComputePort> ports;
  std::set<std::string> used;
  for (const HcaAttachment& hca : host.hcas) {
    std::string device = DeviceOf(host, hca);
    std::string label = device.empty() ? FormatGuid(hca.guid) : device;
    if (!hca.switch_guid) {
      if (left_out) left_out->push_back(fmt::format("{}:{}: not cabled to a switch", label, hca.port));
      continue;
    }
    if (device.empty()) {
      if (left_out)
        left_out->push_back(fmt::format("CA {} port {} (\"{}\"): its device name is unknown; set the node "
                                        "description to \"%h %d\" or give hwloc layouts",
                                        label, hca.port, hca.description));
      continue;
    }
    const Nic* nic = LayoutNicByName(&host, device);
    ports.push_back({device, hca.port, hca.guid, hca.rate_gbps, nic ? nic->pci_bus_id : ""});
    used.insert(device);
  }
  if (host.layout && left_out)
    for (const Nic& nic : host.layout->nics)
      if (nic.kind == "openfabrics" && !used.count(nic.name))
        left_out->push_back(fmt::format("{}: not cabled into the discovered fabric", nic.name));
  SortPorts(ports);
  return ports;
}

namespace {

std::vector<ComputePort> ActivePorts(const std::vector<RdmaPort>& rdma, const TopologyHost* host, std::string_view link_layer) {
  std::vector<ComputePort> ports;
  for (const RdmaPort& port : rdma) {
    if (port.link_layer != link_layer || port.state != "ACTIVE") continue;
    const Nic* nic = LayoutNicByName(host, port.device);
    std::optional<Guid> guid;
    if (nic && nic->node_guid) guid = *nic->node_guid;
    ports.push_back({port.device, port.port, guid, std::nullopt, nic ? nic->pci_bus_id : ""});
  }
  SortPorts(ports);
  return ports;
}

}  // namespace

std::vector<ComputePort> RoceComputePorts(const std::vector<RdmaPort>& rdma, const TopologyHost* host) {
  return ActivePorts(rdma, host, "Ethernet");
}

std::vector<ComputePort> ActiveInfinibandPorts(const std::vector<RdmaPort>& rdma, const TopologyHost* host) {
  return ActivePorts(rdma, host, "InfiniBand");
}

std::vector<ComputePort> ComputePortsFor(const EnvFacts& facts, FabricKind kind, std::vector<std::string>* left_out) {
  const TopologyHost* host = facts.topology ? facts.topology->FindHost(facts.host) : nullptr;
  if (kind == FabricKind::kInfiniband && FabricUnknownFor(facts))
    return facts.rdma_ports ? ActiveInfinibandPorts(*facts.rdma_ports, host) : std::vector<ComputePort>{};
  if (kind == FabricKind::kInfiniband && host) return InfinibandComputePorts(*facts.topology, *host, left_out);
  if (kind == FabricKind::kRoce && facts.rdma_ports) return RoceComputePorts(*facts.rdma_ports, host);
  return {};
}

std::string FormatIbHca(const std::vector<ComputePort>& ports) {
  std::string out = "=";
  for (size_t i = 0; i < ports.size(); ++i) out += fmt::format("{}{}:{}", i ? "," : "", ports[i].device, ports[i].port);
  return out;
}

NicLeafAnalysis AnalyzeNicLeaves(const Topology& topology, const TopologyHost& host) {
  std::vector<std::pair<std::string, Guid>> mine;  // (device or index, leaf)
  for (const HcaAttachment& hca : host.hcas)
    if (hca.switch_guid) mine.emplace_back(DeviceOf(host, hca), *hca.switch_guid);
  if (mine.size() < 2) return {NicLeafShape::kSingleNic, fmt::format("{} has {} NIC port(s) on the fabric", host.name, mine.size())};

  std::set<Guid> my_leaves;
  for (const auto& [device, leaf] : mine) my_leaves.insert(leaf);
  if (my_leaves.size() == 1)
    return {NicLeafShape::kSharedLeaf,
            fmt::format("all {} NIC ports of {} are on leaf {}", mine.size(), host.name, LeafName(topology, *my_leaves.begin()))};

  // Rails: across every host, each leaf carries a single device name.
  std::map<Guid, std::set<std::string>> names_on_leaf;
  for (const TopologyHost& other : topology.hosts)
    for (const HcaAttachment& hca : other.hcas)
      if (hca.switch_guid) names_on_leaf[*hca.switch_guid].insert(DeviceOf(other, hca) + ":" + std::to_string(hca.port));
  for (const auto& [leaf, names] : names_on_leaf) {
    // A device without a name (":1") cannot be told apart from its neighbours: not a rail.
    if (names.size() > 1 || names.begin()->starts_with(":"))
      return {NicLeafShape::kMixed, fmt::format("leaf {} carries {} different NICs ({}{})", LeafName(topology, leaf),
                                                names.size(), *names.begin(), names.size() > 1 ? ", ..." : "")};
  }
  return {NicLeafShape::kRailOptimized,
          fmt::format("rail-optimized: each of {}'s {} NIC ports is on its own rail of leaves", host.name, mine.size())};
}

}  // namespace topolaunch
