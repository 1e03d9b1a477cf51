// The hwloc-free half of the hwloc layout source.
//
// hwloc_layout_source.cc walks an hwloc topology (live or XML) and copies the
// few facts we need into a RawHostTopology: plain structs, no hwloc types.
// ConvertRawTopology() then decides which PCI functions are GPUs, which OS
// devices are NICs, and how far apart each GPU and RDMA NIC are. Keeping the
// decisions here means they read as ordinary C++ and the one file that
// includes <hwloc.h> stays a thin walker.
#pragma once

#include <string>
#include <vector>

#include "topolaunch/layout.h"

namespace topolaunch {

/// A bridge on the path from the CPU side down to a PCI function.
struct RawBridge {
  unsigned long long id = 0;  ///< unique within one topology (hwloc gp_index)
  bool host = false;          ///< a host bridge (root complex), not a PCI-PCI bridge
  std::string pci_bus_id;     ///< a PCI-PCI bridge's own function; empty for a host bridge
  double link_gbytes_per_s = 0;  ///< its upstream link; 0 when unknown (and for a host bridge)
  unsigned vendor_id = 0, device_id = 0, subvendor_id = 0, subdevice_id = 0;  ///< 0 when unknown
};

/// One PCI function as hwloc reported it.
struct RawPciFunction {
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  unsigned class_id = 0;   ///< e.g. 0x0302 (3D controller)
  unsigned vendor_id = 0;  ///< e.g. 0x10de
  unsigned device_id = 0;
  std::string device_name;         ///< hwloc info "PCIDevice", may be empty
  double link_gbytes_per_s = 0;    ///< 0 when unknown
  std::vector<RawBridge> bridges;  ///< host bridge first, closest bridge last
  int numa = -1;                   ///< nearest NUMA node OS index, -1 when several/unknown
  int package = -1;                ///< logical index of the package above it, -1 when unknown
};

/// hwloc OS device types we care about (mirrors hwloc_obj_osdev_type_e).
enum class RawOsDeviceType { kBlock, kGpu, kNetwork, kOpenFabrics, kDma, kCoProc, kOther };

/// One OS device (cuda0, nvml0, mlx5_0, ib0, ...).
struct RawOsDevice {
  std::string name;
  RawOsDeviceType type = RawOsDeviceType::kOther;
  std::string subtype;    ///< hwloc subtype ("CUDA", "NVML", ...), may be empty
  std::string backend;    ///< info "Backend", may be empty
  std::string gpu_model;  ///< info "GPUModel", may be empty
  std::string node_guid;  ///< info "NodeGUID" ("b859:9f03:00e6:76e8"), may be empty
  int pci = -1;           ///< index into RawHostTopology::pci, -1 when not on PCI
  int numa = -1;          ///< for devices not on PCI: nearest NUMA node
  int package = -1;
};

/// Everything the conversion needs, copied out of hwloc.
struct RawHostTopology {
  std::string hostname;
  std::string architecture;
  int packages = 0;
  int cores = 0;
  int pus = 0;
  std::vector<NumaNode> numa_nodes;  ///< by OS index
  std::vector<RawPciFunction> pci;
  std::vector<RawOsDevice> os_devices;
};

/// "0000:07:00.0" (lowercase, 4-digit domain).
std::string FormatPciBusId(const RawPciFunction& pci);
std::string FormatPciBusId(unsigned domain, unsigned bus, unsigned dev, unsigned func);

/// Classifies GPUs and NICs and computes GPU-NIC paths. `source` becomes
/// HostLayout::source. Pure; never fails.
///
/// Rules (see the .cc for why):
/// - GPU: a PCI function of vendor NVIDIA (10de) or AMD (1002) whose class
///   is display (03xx), or any PCI function carrying a CUDA/NVML/RSMI OS
///   device; minus VGA-class server management graphics (ATI ES1000 and
///   the like). One GPU per PCI function, in PCI bus order.
/// - NIC "openfabrics": every OpenFabrics OS device (mlx5_0, rdmap197s0);
///   network OS devices on the same PCI function become its `netdevs`.
/// - NIC "network": a network OS device (eth0) on a PCI function that has
///   no OpenFabrics device.
HostLayout ConvertRawTopology(const RawHostTopology& raw, std::string source);

}  // namespace topolaunch
