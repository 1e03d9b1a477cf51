// Deciding what is a GPU, what is a NIC, and how far apart they are.
//
// GPUs. hwloc shows a GPU twice when its exporter had the CUDA/NVML/RSMI
// plugins (the PCI function, plus OS devices such as cuda0 and nvml0 under
// it), and only as a PCI function otherwise. We therefore start from PCI
// functions: NVIDIA or AMD vendor with a display class (VGA 0300, 3D 0302,
// other 0380, which AMD Instinct cards use), or any function carrying a
// CUDA/NVML/RSMI device. That gives one GPU per function whichever plugins
// ran. Server boards put a small VGA chip on the board for the BMC console;
// most are Matrox or ASPEED (other vendors, so never counted), but older
// HP/Dell boards used ATI ES1000/Rage chips, vendor 1002 like a real AMD
// GPU. We drop a VGA-class function when its device ID is one of those, or
// when its link is narrower than 1 GB/s (a single gen1/gen2 lane: no
// discrete GPU ships with that), unless a compute driver claimed it.
//
// NICs. An OpenFabrics device (mlx5_0, mlx4_0, rdmap197s0 for AWS EFA) is
// what NCCL and UCX open; its IP interfaces on the same PCI function (ib0,
// hsi0, or eth2 on a VPI port) are listed as its `netdevs`, not as separate
// NICs. A network device on a function without RDMA (eth0 on ENA or an
// onboard Intel port) is a NIC of kind "network".
//
// Paths. Two PCI functions that share a PCI-PCI bridge sit behind the same
// PCIe switch (or root port): peer-to-peer traffic, GPUDirect RDMA, need not
// cross the root complex. Sharing only the host bridge means crossing it.
// Otherwise the packages above them decide same_socket / across_sockets.
// The bridges above GPUs and NICs are kept as they are (pci_bridges, each
// device's pci_parent): NCCL's topology file needs the tree, not just the
// relations.
#include "discover/hwloc_layout_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorAmd = 0x1002;
constexpr unsigned kClassVga = 0x0300;

// VGA chips of vendor 1002 that were only ever soldered on server boards for
// the management console.
constexpr std::array<unsigned, 3> kAtiManagementVga = {0x515e /* ES1000 */, 0x5159 /* RV100 */, 0x4752 /* Rage XL */};

bool StartsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// A driver-level compute device: proof that a PCI function is a real GPU.
bool IsComputeOsDevice(const RawOsDevice& d) {
  for (std::string_view kind : {"CUDA", "NVML", "RSMI"})
    if (d.subtype == kind || d.backend == kind) return true;
  return StartsWith(d.name, "cuda") || StartsWith(d.name, "nvml") || StartsWith(d.name, "rsmi");
}

// The OS devices worth listing for a GPU: compute and OpenCL handles, not
// DRM display nodes (card0, renderD128, controlD64).
bool IsGpuHandle(const RawOsDevice& d) {
  return IsComputeOsDevice(d) || d.subtype == "OpenCL" || d.backend == "OpenCL" || StartsWith(d.name, "opencl");
}

bool LooksLikeManagementVga(const RawPciFunction& p) {
  if (p.class_id != kClassVga) return false;
  if (p.vendor_id == kVendorAmd &&
      std::find(kAtiManagementVga.begin(), kAtiManagementVga.end(), p.device_id) != kAtiManagementVga.end())
    return true;
  return p.link_gbytes_per_s > 0 && p.link_gbytes_per_s < 1.0;
}

std::optional<PcieLink> LinkOf(double gbytes_per_s) {
  if (gbytes_per_s <= 0) return std::nullopt;
  return PcieLink{gbytes_per_s};
}

// The bridge right above a function: the last of its chain unless that is
// a host bridge.
std::string PciParent(const RawPciFunction& p) {
  if (p.bridges.empty() || p.bridges.back().host) return "";
  return p.bridges.back().pci_bus_id;
}

// "b859:9f03:00e6:76e8" -> 0xb8599f0300e676e8; nullopt for malformed or zero
// (AWS EFA reports 0000:0000:0000:0000: it has no InfiniBand GUID).
std::optional<unsigned long long> ParseNodeGuid(const std::string& text) {
  std::string hex;
  for (char c : text)
    if (c != ':') hex += c;
  std::optional<Guid> guid = hex.size() == 16 ? ParseGuid(hex) : std::nullopt;
  if (!guid || *guid == 0) return std::nullopt;
  return *guid;
}

std::vector<Gpu> FindGpus(const RawHostTopology& raw, std::vector<int>& gpu_pci) {
  std::vector<int> order;
  for (size_t i = 0; i < raw.pci.size(); ++i) order.push_back(static_cast<int>(i));
  auto key = [&](int i) {
    const RawPciFunction& p = raw.pci[i];
    return std::array<unsigned, 4>{p.domain, p.bus, p.dev, p.func};
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<Gpu> gpus;
  for (int i : order) {
    const RawPciFunction& p = raw.pci[i];
    if (p.vendor_id != kVendorNvidia && p.vendor_id != kVendorAmd) continue;
    Gpu gpu;
    bool compute = false;
    for (const RawOsDevice& d : raw.os_devices) {
      if (d.pci != i || !IsGpuHandle(d)) continue;
      compute = compute || IsComputeOsDevice(d);
      gpu.os_devices.push_back(d.name);
      if (gpu.model.empty()) gpu.model = d.gpu_model;
    }
    bool display = (p.class_id >> 8) == 0x03;
    if (!compute && !(display && !LooksLikeManagementVga(p))) continue;
    std::sort(gpu.os_devices.begin(), gpu.os_devices.end());
    gpu.pci_bus_id = FormatPciBusId(p);
    gpu.vendor = p.vendor_id == kVendorNvidia ? "nvidia" : "amd";
    if (gpu.model.empty()) gpu.model = p.device_name;
    gpu.numa = p.numa;
    gpu.link = LinkOf(p.link_gbytes_per_s);
    gpu.pci_parent = PciParent(p);
    gpus.push_back(std::move(gpu));
    gpu_pci.push_back(i);
  }
  return gpus;
}

Nic MakeNic(const RawHostTopology& raw, const RawOsDevice& d, std::string kind) {
  Nic nic;
  nic.name = d.name;
  nic.kind = std::move(kind);
  nic.numa = d.numa;
  if (d.pci >= 0) {
    const RawPciFunction& p = raw.pci[d.pci];
    nic.pci_bus_id = FormatPciBusId(p);
    nic.numa = p.numa;
    nic.link = LinkOf(p.link_gbytes_per_s);
    nic.pci_parent = PciParent(p);
  }
  return nic;
}

std::vector<Nic> FindNics(const RawHostTopology& raw) {
  std::vector<Nic> nics;
  std::vector<bool> rdma_function(raw.pci.size(), false);
  for (const RawOsDevice& d : raw.os_devices) {
    if (d.type != RawOsDeviceType::kOpenFabrics) continue;
    Nic nic = MakeNic(raw, d, "openfabrics");
    nic.node_guid = ParseNodeGuid(d.node_guid);
    if (d.pci >= 0) {
      rdma_function[d.pci] = true;
      for (const RawOsDevice& n : raw.os_devices)
        if (n.type == RawOsDeviceType::kNetwork && n.pci == d.pci) nic.netdevs.push_back(n.name);
      std::sort(nic.netdevs.begin(), nic.netdevs.end(), NaturalLess);
    }
    nics.push_back(std::move(nic));
  }
  for (const RawOsDevice& d : raw.os_devices)
    if (d.type == RawOsDeviceType::kNetwork && (d.pci < 0 || !rdma_function[d.pci]))
      nics.push_back(MakeNic(raw, d, "network"));
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return NaturalLess(a.name, b.name); });
  return nics;
}

// Every PCI-PCI bridge above the kept GPUs and NICs, once, in bus-id order,
// each with the bridge above it.
std::vector<PciBridge> BridgesAbove(const std::vector<const RawPciFunction*>& kept) {
  std::vector<PciBridge> bridges;
  std::set<std::string> known;  // a bridge's parent is always listed before it: no loop can form
  for (const RawPciFunction* p : kept) {
    std::string parent;
    for (const RawBridge& b : p->bridges) {
      if (b.host) {
        parent.clear();
        continue;
      }
      if (!b.pci_bus_id.empty() && known.insert(b.pci_bus_id).second)
        bridges.push_back({b.pci_bus_id, parent, LinkOf(b.link_gbytes_per_s), b.vendor_id, b.device_id, b.subvendor_id,
                           b.subdevice_id});
      parent = b.pci_bus_id;
    }
  }
  std::sort(bridges.begin(), bridges.end(), [](const PciBridge& a, const PciBridge& b) { return a.pci_bus_id < b.pci_bus_id; });
  return bridges;
}

PcieRelation Relate(const RawPciFunction& gpu, const RawOsDevice& nic, const RawHostTopology& raw) {
  if (nic.pci < 0) {
    if (gpu.package < 0 || nic.package < 0) return PcieRelation::kUnknown;
    return gpu.package == nic.package ? PcieRelation::kSameSocket : PcieRelation::kAcrossSockets;
  }
  const RawPciFunction& other = raw.pci[nic.pci];
  size_t common = 0;
  while (common < gpu.bridges.size() && common < other.bridges.size() &&
         gpu.bridges[common].id == other.bridges[common].id)
    ++common;
  if (common > 0) return gpu.bridges[common - 1].host ? PcieRelation::kSameHostBridge : PcieRelation::kSamePcieSwitch;
  if (gpu.package < 0 || other.package < 0) return PcieRelation::kUnknown;
  return gpu.package == other.package ? PcieRelation::kSameSocket : PcieRelation::kAcrossSockets;
}

}  // namespace

std::string FormatPciBusId(const RawPciFunction& pci) { return FormatPciBusId(pci.domain, pci.bus, pci.dev, pci.func); }

std::string FormatPciBusId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, func);
}

HostLayout ConvertRawTopology(const RawHostTopology& raw, std::string source) {
  HostLayout layout;
  layout.hostname = raw.hostname;
  layout.source = std::move(source);
  layout.architecture = raw.architecture;
  layout.packages = raw.packages;
  layout.cores = raw.cores;
  layout.pus = raw.pus;
  layout.numa_nodes = raw.numa_nodes;
  std::vector<int> gpu_pci;
  layout.gpus = FindGpus(raw, gpu_pci);
  layout.nics = FindNics(raw);
  for (size_t g = 0; g < layout.gpus.size(); ++g)
    for (const Nic& nic : layout.nics) {
      if (nic.kind != "openfabrics") continue;
      auto dev = std::find_if(raw.os_devices.begin(), raw.os_devices.end(), [&](const RawOsDevice& d) {
        return d.type == RawOsDeviceType::kOpenFabrics && d.name == nic.name;
      });
      layout.gpu_nic_paths.push_back({layout.gpus[g].pci_bus_id, nic.name, Relate(raw.pci[gpu_pci[g]], *dev, raw)});
    }
  std::vector<const RawPciFunction*> kept;
  for (int i : gpu_pci) kept.push_back(&raw.pci[i]);
  for (const RawOsDevice& d : raw.os_devices)
    if (d.pci >= 0 && (d.type == RawOsDeviceType::kOpenFabrics || d.type == RawOsDeviceType::kNetwork))
      kept.push_back(&raw.pci[d.pci]);
  layout.pci_bridges = BridgesAbove(kept);
  return layout;
}

}  // namespace topolaunch
