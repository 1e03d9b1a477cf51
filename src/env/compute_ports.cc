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
// What a port is. Not every active port carries GPU traffic: a storage HCA
// (on its own subnet, or the same one), a front-end RoCE NIC. The host's
// layout says which NICs share a PCIe switch with a GPU -- the NICs GPUDirect
// RDMA is built around (NVIDIA's reference designs put one under each GPU's
// switch and the storage and front-end NICs elsewhere). When some port's NIC
// shares a switch with a GPU, the ports whose NIC shares none are left out,
// each with that reason. Without that knowledge every port stays.
//
// Several subnets. Per-rail or per-plane subnets put a host's ports on
// fabrics one walk does not see. sysfs shows them ACTIVE with an InfiniBand
// link layer; such a port joins the walked ones only when the layout shows it
// under a GPU's PCIe switch, else it is left out with the reason and the fix.
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

std::string DeviceOf(const TopologyHost& host, const HcaAttachment& hca) {
  if (!hca.device.empty()) return hca.device;
  const Nic* nic = LayoutNicByGuid(host, hca.guid);
  return nic ? nic->name : "";
}

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

namespace {

// The host's HCA ports the topology has cabled to a switch, named.
std::vector<ComputePort> CabledPorts(const TopologyHost& host, std::vector<std::string>* left_out) {
  std::vector<ComputePort> ports;
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
  }
  return ports;
}

// NICs of `host` that share a PCIe switch with a GPU; empty when unknown.
std::set<std::string> GpuNics(const TopologyHost* host) {
  std::set<std::string> nics;
  if (!host || !host->layout) return nics;
  for (const GpuNicPath& path : host->layout->gpu_nic_paths)
    if (path.relation == PcieRelation::kSamePcieSwitch) nics.insert(path.nic);
  return nics;
}

// See "What a port is" at the top of the file.
void KeepGpuNics(const TopologyHost* host, std::vector<ComputePort>& ports, std::vector<std::string>* left_out) {
  std::set<std::string> gpu_nics = GpuNics(host);
  bool any = std::any_of(ports.begin(), ports.end(), [&](const ComputePort& p) { return gpu_nics.contains(p.device); });
  if (!any) return;
  std::erase_if(ports, [&](const ComputePort& p) {
    if (gpu_nics.contains(p.device)) return false;
    if (left_out)
      left_out->push_back(fmt::format("{}:{}: no GPU shares its PCIe switch (a storage or front-end NIC; "
                                      "the GPUs' NICs do)",
                                      p.device, p.port));
    return true;
  });
}

}  // namespace

std::vector<ComputePort> InfinibandComputePorts(const TopologyHost& host, const std::vector<RdmaPort>* sysfs,
                                                std::vector<std::string>* left_out) {
  std::vector<ComputePort> ports = CabledPorts(host, left_out);
  std::set<std::string> used;
  for (const ComputePort& p : ports) used.insert(p.device);
  std::set<std::string> gpu_nics = GpuNics(&host);
  std::set<std::string> active_elsewhere;
  if (sysfs)
    for (const RdmaPort& port : *sysfs) {
      if (port.link_layer != "InfiniBand" || port.state != "ACTIVE" || used.contains(port.device)) continue;
      active_elsewhere.insert(port.device);
      if (gpu_nics.contains(port.device)) {
        const Nic* nic = LayoutNicByName(&host, port.device);
        std::optional<Guid> guid;
        if (nic && nic->node_guid) guid = *nic->node_guid;
        ports.push_back({port.device, port.port, guid, std::nullopt, nic ? nic->pci_bus_id : "", true});
      } else if (left_out) {
        left_out->push_back(fmt::format("{}:{}: active on an InfiniBand subnet the walk did not cover, and "
                                        "nothing shows it carries GPU traffic (give that subnet's dump as "
                                        "another --fabric, or hwloc layouts)",
                                        port.device, port.port));
      }
    }
  std::set<std::string> listed;
  for (const ComputePort& p : ports) listed.insert(p.device);
  if (host.layout && left_out)
    for (const Nic& nic : host.layout->nics)
      if (nic.kind == "openfabrics" && !listed.contains(nic.name) && !active_elsewhere.contains(nic.name))
        left_out->push_back(fmt::format("{}: not cabled into the discovered fabric", nic.name));
  KeepGpuNics(&host, ports, left_out);
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
  const std::vector<RdmaPort>* sysfs = facts.rdma_ports ? &*facts.rdma_ports : nullptr;
  std::vector<ComputePort> ports;
  if (kind == FabricKind::kInfiniband && FabricUnknownFor(facts)) {
    if (sysfs) ports = ActiveInfinibandPorts(*sysfs, host);
  } else if (kind == FabricKind::kInfiniband && host) {
    return InfinibandComputePorts(*host, sysfs, left_out);
  } else if (kind == FabricKind::kRoce && sysfs) {
    ports = RoceComputePorts(*sysfs, host);
  }
  KeepGpuNics(host, ports, left_out);
  return ports;
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
