// NCCL topology XML writer.
//
// The tree NCCL builds from the file is CPU (one per NUMA node) -> PCI
// switches -> endpoint PCI functions -> gpu / nic+net. hwloc's layout, as
// topolaunch keeps it, has the endpoints with their NUMA node and, for every
// GPU x NIC pair, whether they sit behind the same PCIe switch. That is
// enough to rebuild what matters to NCCL's path search: which GPU and NIC
// share a switch (PIX) versus a CPU (PHB/SYS). Pairs that share a switch are
// joined (union-find) and each group of two or more gets one virtual switch.
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
  int gpu_dev = -1;
  std::vector<const ComputePort*> ports;  // a NIC's ports (one <net> each)
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
  int dev = 0;
  for (const Gpu& gpu : layout.gpus) {
    if (gpu.vendor != "nvidia" || gpu.pci_bus_id.empty()) continue;
    devices.push_back({gpu.pci_bus_id, gpu.numa, gpu.link, &gpu, dev++, {}});
  }
  std::map<std::string, size_t> nic_at;
  for (const ComputePort& port : ports) {
    std::string key = port.pci_bus_id.empty() ? "virtual:" + port.device : port.pci_bus_id;
    auto [it, fresh] = nic_at.emplace(key, devices.size());
    if (fresh) {
      Device nic{port.pci_bus_id, -1, std::nullopt, nullptr, -1, {}};
      for (const Nic& n : layout.nics)
        if (n.name == port.device) nic.numa = n.numa, nic.link = n.link;
      devices.push_back(nic);
    }
    devices[it->second].ports.push_back(&port);
  }
  return devices;
}

// Union-find over devices that share a PCIe switch (GPU x NIC relations).
std::vector<size_t> SwitchGroups(const HostLayout& layout, const std::vector<Device>& devices) {
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
  for (size_t i = 0; i < devices.size(); ++i) parent[i] = find(i);
  return parent;
}

std::string DeviceXml(const Device& device, FabricKind fabric, const std::string& indent) {
  std::string out;
  if (device.bus_id.empty()) {  // a NIC without a PCI function: NCCL takes <nic> under <cpu>
    out += indent + "<nic>\n";
  } else {
    std::string klass = device.gpu ? "0x030200" : fabric == FabricKind::kInfiniband ? "0x020700" : "0x020000";
    std::string vendor = device.gpu ? " vendor=\"0x10de\"" : "";
    out += fmt::format("{}<pci busid=\"{}\" class=\"{}\"{}{}>\n", indent, device.bus_id, klass, vendor, LinkAttributes(device.link));
    if (device.gpu) return out + fmt::format("{}  <gpu dev=\"{}\"/>\n{}</pci>\n", indent, device.gpu_dev, indent);
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
    if (port.device.find_first_of("\"<>&") != std::string::npos)
      return Error(ErrorCode::kBadInput, port.device, "this device name cannot be written into NCCL's topology XML");
  std::vector<Device> devices = CollectDevices(layout, ports);
  std::vector<size_t> group = SwitchGroups(layout, devices);
  std::vector<NumaNode> numas = layout.numa_nodes;
  if (numas.empty()) numas.push_back({0, -1, {}, 0});
  std::string arch = NcclArch(layout.architecture);
  std::string out = "<system version=\"1\">\n";
  int next_switch = 1;
  for (size_t n = 0; n < numas.size(); ++n) {
    const NumaNode& numa = numas[n];
    std::string mask = numa.cpus.empty() ? "" : FormatCpuMask(numa.cpus);
    out += fmt::format("  <cpu numaid=\"{}\"", numa.os_index);
    if (!mask.empty() && mask.size() < 255) out += fmt::format(" affinity=\"{}\"", mask);  // NCCL's value limit
    if (!arch.empty()) out += fmt::format(" arch=\"{}\"", arch);
    out += ">\n";
    for (size_t root = 0; root < devices.size(); ++root) {
      if (group[root] != root || CpuSlot(numas, devices[root].numa) != n) continue;
      std::vector<size_t> members;
      for (size_t i = 0; i < devices.size(); ++i) if (group[i] == root) members.push_back(i);
      if (members.size() == 1) { out += DeviceXml(devices[root], fabric, "    "); continue; }
      std::optional<PcieLink> uplink;
      for (size_t i : members) if (devices[i].link && (!uplink || devices[i].link->gbytes_per_s > uplink->gbytes_per_s)) uplink = devices[i].link;
      if (!uplink) uplink = PcieLink{31.5};
      out += fmt::format("    <pci busid=\"ffff:ff:{:02x}.0\" class=\"0x060400\"{}>\n", next_switch++, LinkAttributes(uplink));
      for (size_t i : members) out += DeviceXml(devices[i], fabric, "      ");
      out += "    </pci>\n";
    }
    out += "  </cpu>\n";
  }
  return out + "</system>\n";
}

}  // namespace topolaunch
