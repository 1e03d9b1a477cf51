// NCCL topology XML writer.
//
// The tree NCCL builds from the file is CPU (one per NUMA node) -> PCI
// switches -> endpoint PCI functions -> gpu / nic+net. On bare metal NCCL
// makes that tree itself from sysfs (src/graph/xml.cc,
// ncclTopoGetXmlFromSys): from a device it goes up two levels at a time,
// "rewind two '/' and follow the upper PCI switch", so a switch becomes one
// <pci> named after its upstream port, the root port and the downstream
// ports are passed over, and a device whose grandparent is the root bus
// sits right under its <cpu>. We apply the same rule to the bridges hwloc
// reported (HostLayout::pci_bridges), so the file holds the <pci> levels
// NCCL would have made and its path classes (paths.cc, ncclTopoSetPaths:
// one switch PIX, several PXB, through the CPU PHB, across CPUs SYS) come
// out as on the machine itself.
//
// A layout without bridges (written before topolaunch kept them) still has
// the GPU x NIC relations: pairs that share a switch are joined
// (union-find) and each group gets one virtual switch, busid "ffff:ff:NN.0"
// as cloud topology files do.
#include "env/nccl_topo_xml.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

namespace topolaunch {

namespace {

struct Device {
  std::string bus_id;
  int numa = -1;
  std::optional<PcieLink> link;
  const Gpu* gpu = nullptr;
  std::string pci_parent;                 // the bridge right above it
  std::vector<const ComputePort*> ports;  // a NIC's ports (one <net> each)
  std::vector<std::string> levels;        // the <pci> switches above it, top first
};

// NCCL's longest attribute value: xml.cc, xmlGetValue, fails when the
// value and its closing quote reach MAX_STR_LEN - 1 (255 - 1) characters.
constexpr size_t kNcclMaxValue = 253;

// A <pci> switch level: its upstream link, and the bridge it is (none for a
// virtual switch).
struct SwitchLevel {
  std::optional<PcieLink> link;
  const PciBridge* bridge = nullptr;
};

std::string NcclArch(const std::string& arch) {
  if (arch == "x86_64") return "x86_64";
  if (arch == "aarch64" || arch == "arm64") return "arm64";
  if (arch.starts_with("ppc64")) return "ppc64";
  return "";
}

std::string LinkAttributes(const std::optional<PcieLink>& link) {
  if (!link || link->gbytes_per_s <= 0) return "";
  auto [speed, width] = PcieLinkAttributes(link->gbytes_per_s);
  return fmt::format(" link_speed=\"{}\" link_width=\"{}\"", speed, width);
}

std::vector<Device> CollectDevices(const HostLayout& layout, const std::vector<ComputePort>& ports) {
  std::vector<Device> devices;
  for (const Gpu& gpu : layout.gpus) {
    if (gpu.vendor != "nvidia" || gpu.pci_bus_id.empty()) continue;
    devices.push_back({gpu.pci_bus_id, gpu.numa, gpu.link, &gpu, gpu.pci_parent, {}, {}});
  }
  std::map<std::string, size_t> nic_at;
  for (const ComputePort& port : ports) {
    std::string key = port.pci_bus_id.empty() ? "virtual:" + port.device : port.pci_bus_id;
    auto [it, fresh] = nic_at.emplace(key, devices.size());
    if (fresh) {
      Device nic{port.pci_bus_id, -1, std::nullopt, nullptr, "", {}, {}};
      for (const Nic& n : layout.nics)
        if (n.name == port.device) nic.numa = n.numa, nic.link = n.link, nic.pci_parent = n.pci_parent;
      devices.push_back(nic);
    }
    devices[it->second].ports.push_back(&port);
  }
  return devices;
}

// NCCL's switch levels above a device with `chain` bridges above it (host
// bridge side first): the grandparent of the device, the grandparent of
// that, ... while there is one (xml.cc, ncclTopoGetXmlFromSys). Top first.
std::vector<std::string> NcclLevels(const std::vector<const PciBridge*>& chain) {
  std::vector<std::string> levels;
  for (long i = static_cast<long>(chain.size()) - 2; i >= 0; i -= 2) levels.push_back(chain[i]->pci_bus_id);
  std::reverse(levels.begin(), levels.end());
  return levels;
}

void SetSwitchLevels(const HostLayout& layout, std::vector<Device>& devices, std::map<std::string, SwitchLevel>& levels) {
  for (Device& d : devices) {
    std::vector<const PciBridge*> chain = PciBridgeChain(layout, d.pci_parent);
    d.levels = NcclLevels(chain);
    for (const PciBridge* b : chain)
      if (std::find(d.levels.begin(), d.levels.end(), b->pci_bus_id) != d.levels.end()) levels[b->pci_bus_id] = {b->link, b};
  }
}

// Union-find over devices that share a PCIe switch (GPU x NIC relations);
// each group of two or more gets one virtual switch.
void SetVirtualSwitches(const HostLayout& layout, std::vector<Device>& devices, std::map<std::string, SwitchLevel>& levels) {
  std::vector<size_t> parent(devices.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t i) { while (parent[i] != i) i = parent[i] = parent[parent[i]]; return i; };
  auto index_of = [&](auto match) -> std::optional<size_t> {
    for (size_t i = 0; i < devices.size(); ++i) if (match(devices[i])) return i;
    return std::nullopt;
  };
  for (const GpuNicPath& path : layout.gpu_nic_paths) {
    if (path.relation != PcieRelation::kSamePcieSwitch) continue;
    auto gpu = index_of([&](const Device& d) { return d.gpu && d.bus_id == path.gpu; });
    auto nic = index_of([&](const Device& d) {
      for (const ComputePort* p : d.ports) if (p->device == path.nic) return true;
      return false;
    });
    if (gpu && nic) parent[find(*gpu)] = find(*nic);
  }
  int next_switch = 1;
  for (size_t root = 0; root < devices.size(); ++root) {
    if (find(root) != root) continue;
    std::vector<size_t> members;
    for (size_t i = 0; i < devices.size(); ++i) if (find(i) == root) members.push_back(i);
    if (members.size() < 2) continue;
    std::string id = fmt::format("ffff:ff:{:02x}.0", next_switch++);
    std::optional<PcieLink> uplink;
    for (size_t i : members) {
      devices[i].levels = {id};
      if (devices[i].link && (!uplink || devices[i].link->gbytes_per_s > uplink->gbytes_per_s)) uplink = devices[i].link;
    }
    levels[id] = {uplink ? uplink : PcieLink{31.5}, nullptr};  // no sysfs behind a made-up busid: say something
  }
}

std::string DeviceXml(const Device& device, FabricKind fabric, const std::string& indent);

// A switch's PCI ids as NCCL's own dump has them, which is how NCCL tells a
// Broadcom PEX switch (two levels that switch as one) and flattens it
// (topo.cc, ncclTopoFlattenBcmSwitches); nothing when hwloc gave none.
std::string IdAttributes(const PciBridge* bridge) {
  if (!bridge || (!bridge->vendor_id && !bridge->device_id)) return "";
  return fmt::format(" vendor=\"0x{:04x}\" device=\"0x{:04x}\" subsystem_vendor=\"0x{:04x}\" subsystem_device=\"0x{:04x}\"",
                     bridge->vendor_id, bridge->device_id, bridge->subvendor_id, bridge->subdevice_id);
}

// The devices whose levels agree above `depth`, as the <pci> switches at
// `depth` and below, then the devices right here. Switches and devices in
// bus-id order (NCCL keeps its own that way).
std::string TreeXml(const std::vector<const Device*>& devices, size_t depth,
                    const std::map<std::string, SwitchLevel>& levels, FabricKind fabric, const std::string& indent) {
  std::map<std::string, std::vector<const Device*>> below;
  std::vector<const Device*> here;
  for (const Device* d : devices) {
    if (d->levels.size() > depth)
      below[d->levels[depth]].push_back(d);
    else
      here.push_back(d);
  }
  std::sort(here.begin(), here.end(), [](const Device* a, const Device* b) { return a->bus_id < b->bus_id; });
  std::string out;
  for (const auto& [id, members] : below) {
    auto level = levels.find(id);
    const SwitchLevel none{};
    const SwitchLevel& sw = level == levels.end() ? none : level->second;
    out += fmt::format("{}<pci busid=\"{}\" class=\"0x060400\"{}{}>\n", indent, id, IdAttributes(sw.bridge), LinkAttributes(sw.link));
    out += TreeXml(members, depth + 1, levels, fabric, indent + "  ");
    out += indent + "</pci>\n";
  }
  for (const Device* d : here) out += DeviceXml(*d, fabric, indent);
  return out;
}

std::string DeviceXml(const Device& device, FabricKind fabric, const std::string& indent) {
  std::string out;
  if (device.bus_id.empty()) {  // a NIC without a PCI function: NCCL takes <nic> under <cpu>
    out += indent + "<nic>\n";
  } else {
    std::string klass = device.gpu ? "0x030200" : fabric == FabricKind::kInfiniband ? "0x020700" : "0x020000";
    std::string vendor = device.gpu ? " vendor=\"0x10de\"" : "";
    out += fmt::format("{}<pci busid=\"{}\" class=\"{}\"{}{}>\n", indent, device.bus_id, klass, vendor, LinkAttributes(device.link));
    // No dev: NCCL fills it from NVML (xml.cc, ncclTopoGetXmlFromGpu), and
    // in a container that sees some GPUs NVML numbers them from 0.
    if (device.gpu) return out + fmt::format("{}  <gpu/>\n{}</pci>\n", indent, indent);
    out += indent + "  <nic>\n";
  }
  std::string inner = indent + (device.bus_id.empty() ? "  " : "    ");
  for (const ComputePort* port : device.ports) {
    out += fmt::format("{}<net name=\"{}\" port=\"{}\"", inner, port->device, port->port);
    if (port->rate_gbps) out += fmt::format(" speed=\"{}\"", static_cast<long long>(std::llround(*port->rate_gbps * 1000)));
    if (port->guid) out += fmt::format(" guid=\"{}\"", FormatGuid(*port->guid));
    out += "/>\n";
  }
  if (device.bus_id.empty()) return out + indent + "</nic>\n";
  return out + indent + "  </nic>\n" + indent + "</pci>\n";
}

// Which <cpu> a device goes under: its NUMA node's, or the first one when
// hwloc did not say (or named a node the layout does not list).
size_t CpuSlot(const std::vector<NumaNode>& numas, int numa) {
  for (size_t i = 0; i < numas.size(); ++i)
    if (numas[i].os_index == numa) return i;
  return 0;
}

}  // namespace

std::string FormatCpuMask(const std::vector<int>& cpus) {
  int top = 0;
  for (int cpu : cpus) top = std::max(top, cpu);
  std::vector<unsigned> groups(top / 32 + 1, 0);
  for (int cpu : cpus) groups[cpu / 32] |= 1u << (cpu % 32);
  std::string out;
  for (size_t i = groups.size(); i-- > 0;) out += fmt::format("{}{:08x}", out.empty() ? "" : ",", groups[i]);
  return out;
}

std::pair<std::string, int> PcieLinkAttributes(double gbytes_per_s) {
  // Per-lane GB/s of each generation as hwloc computes it, and NCCL's names.
  static const std::pair<double, const char*> kGens[] = {
      {0.25, "2.5 GT/s PCIe"}, {0.5, "5.0 GT/s PCIe"}, {0.985, "8.0 GT/s PCIe"},
      {1.969, "16.0 GT/s PCIe"}, {3.938, "32.0 GT/s PCIe"}, {7.563, "64.0 GT/s PCIe"}};
  std::pair<std::string, int> best{"16.0 GT/s PCIe", 16};
  double best_error = INFINITY;
  for (int width : {16, 8, 4, 2, 1}) {
    for (const auto& [per_lane, name] : kGens) {
      double error = std::fabs(std::log(per_lane * width / gbytes_per_s));
      if (error < best_error - 0.01) best = {name, width}, best_error = error;  // near-ties keep the wider link
    }
  }
  return best;
}

Result<std::string> FormatNcclTopoXml(const HostLayout& layout, const std::vector<ComputePort>& ports, FabricKind fabric) {
  for (const ComputePort& port : ports)
    if (port.device.find_first_of("\"<>&") != std::string::npos || port.device.size() > kNcclMaxValue)
      return Error(ErrorCode::kBadInput, port.device, "this device name cannot be written into NCCL's topology XML");
  std::vector<Device> devices = CollectDevices(layout, ports);
  std::map<std::string, SwitchLevel> switches;
  if (!layout.pci_bridges.empty())
    SetSwitchLevels(layout, devices, switches);
  else
    SetVirtualSwitches(layout, devices, switches);
  std::vector<NumaNode> numas = layout.numa_nodes;
  if (numas.empty()) numas.push_back({0, -1, {}, 0});
  // A top switch goes under the CPU of the first device below it that
  // knows its NUMA node; a device alone under its own.
  std::map<std::string, int> top_numa;
  for (const Device& d : devices)
    if (!d.levels.empty() && d.numa >= 0) top_numa.emplace(d.levels.front(), d.numa);
  std::vector<std::vector<const Device*>> by_cpu(numas.size());
  for (const Device& d : devices) {
    int numa = d.numa;
    if (!d.levels.empty()) {
      auto it = top_numa.find(d.levels.front());
      numa = it == top_numa.end() ? -1 : it->second;
    }
    by_cpu[CpuSlot(numas, numa)].push_back(&d);
  }
  std::string arch = NcclArch(layout.architecture);
  std::string out = "<system version=\"1\">\n";
  for (size_t n = 0; n < numas.size(); ++n) {
    const NumaNode& numa = numas[n];
    std::string mask = numa.cpus.empty() ? "" : FormatCpuMask(numa.cpus);
    out += fmt::format("  <cpu numaid=\"{}\"", numa.os_index);
    if (!mask.empty() && mask.size() <= kNcclMaxValue) out += fmt::format(" affinity=\"{}\"", mask);
    if (!arch.empty()) out += fmt::format(" arch=\"{}\"", arch);
    out += ">\n";
    out += TreeXml(by_cpu[n], 0, switches, fabric, "    ");
    out += "  </cpu>\n";
  }
  return out + "</system>\n";
}

}  // namespace topolaunch
