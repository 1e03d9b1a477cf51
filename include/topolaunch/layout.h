// The local layout of one host: NUMA nodes, GPUs, NICs and how they connect.
//
// Produced by a host-layout source (live hwloc, an hwloc XML file, or XML
// gathered from a remote node); all of them go through one conversion, so a
// machine and its exported XML give the same HostLayout. Plan binds ranks from
// it; env derives NCCL settings from it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

/// A NUMA node and the logical CPUs (OS indexes) whose memory is local to it.
struct NumaNode {
  int os_index = 0;
  int package = -1;               ///< socket index, -1 when unknown
  std::vector<int> cpus;          ///< PU OS indexes, ascending
  unsigned long long memory_bytes = 0;
  bool operator==(const NumaNode&) const = default;
};

/// Negotiated PCIe link as hwloc reports it: total GB/s (lanes x per-lane).
struct PcieLink {
  double gbytes_per_s = 0;
  bool operator==(const PcieLink&) const = default;
};

/// A GPU's membership in a multi-node NVLink fabric (an NVL72-class rack:
/// trays of GPUs joined by NVLink switches), from NVML's GPU fabric info.
/// GPUs registered with the same cluster UUID and clique ID reach each other
/// over NVLink across hosts: NCCL's MNNVL check (mnnvl.cc, paths.cc).
/// Absent on GPUs without such a fabric: PCIe boards, and HGX/DGX boards
/// whose NVLink stays inside the host (NVML answers "not supported", or a
/// completed registration with an all-zero cluster UUID).
struct GpuFabric {
  std::string cluster_uuid;       ///< 16 bytes as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex
  unsigned clique_id = 0;
  std::string state;              ///< "completed", "in_progress" or "not_started" (kGpuFabricStates)
  std::string status;             ///< "ok", or NVML's reason the registration failed
  /// What the fabric's health mask reports as wrong (kGpuFabricHealthIssues);
  /// empty when healthy or when the driver does not report health.
  std::vector<std::string> health;
  bool operator==(const GpuFabric&) const = default;

  /// True when NCCL counts this GPU in an NVLink domain: registration
  /// completed under a cluster UUID that is not all zeros. (NCCL does not
  /// look at `status`; `audit` does.)
  bool InDomain() const;
};

/// The registration states NVML reports for a GPU of an NVLink fabric, in
/// nvmlGpuFabricState_t order from 1.
inline constexpr std::string_view kGpuFabricStates[] = {"not_started", "in_progress", "completed"};

/// The health issues a GpuFabric may list, in healthMask field order.
inline constexpr std::string_view kGpuFabricHealthIssues[] = {
    "degraded_bandwidth", "route_recovery", "route_unhealthy", "access_timeout_recovery", "incorrect_configuration"};

/// The all-zero cluster UUID: no multi-node fabric behind the GPU.
inline constexpr std::string_view kZeroFabricUuid = "00000000-0000-0000-0000-000000000000";

struct Gpu {
  std::string pci_bus_id;         ///< "0000:07:00.0", lowercase
  std::string vendor;             ///< "nvidia" or "amd"
  std::string model;              ///< marketing name when known
  std::vector<std::string> os_devices;  ///< "cuda0", "nvml0", "rsmi0", ... possibly empty
  int numa = -1;                  ///< nearest NUMA node OS index, -1 when unknown
  std::optional<PcieLink> link;
  std::vector<std::string> nvlink_peers;  ///< PCI bus ids of NVLink peers (NVML)
  std::string pci_parent;         ///< the PciBridge right above it; empty on a host bridge or when unknown
  std::optional<GpuFabric> nvlink_fabric;  ///< NVML's GPU fabric info, when the GPU is in such a fabric
  bool operator==(const Gpu&) const = default;
};

/// An RDMA device (OpenFabrics: mlx5_0, rdmap197s0) or a plain network port.
struct Nic {
  std::string name;               ///< "mlx5_0", or "eth0" for kind "network"
  std::string kind;               ///< "openfabrics" or "network"
  std::string pci_bus_id;         ///< empty for virtual devices
  std::vector<std::string> netdevs;  ///< IP interfaces on the same PCI function
  std::optional<unsigned long long> node_guid;  ///< IB NodeGUID when hwloc knows it
  int numa = -1;
  std::optional<PcieLink> link;
  std::string pci_parent;         ///< the PciBridge right above it; empty on a host bridge or when unknown
  bool operator==(const Nic&) const = default;
};

/// A PCI-PCI bridge above a GPU or NIC, as hwloc reports it: a root port, or
/// the upstream or a downstream port of a PCIe switch. The bridges with their
/// parents are the machine's PCI tree between the host bridges and the
/// devices, which NCCL reads from sysfs and a topology file must keep.
struct PciBridge {
  std::string pci_bus_id;         ///< its own function, "0000:03:00.0"
  std::string parent;             ///< the bridge above it; empty when it sits on a host bridge
  std::optional<PcieLink> link;   ///< its upstream link
  /// Its PCI ids, 0 when unknown: NCCL tells Broadcom PEX switches, which
  /// show two levels but switch as one, by them (topo.cc, getBcmGen).
  unsigned vendor_id = 0, device_id = 0, subvendor_id = 0, subdevice_id = 0;
  bool operator==(const PciBridge&) const = default;
};

/// How far apart a GPU and a NIC are on the PCIe/CPU tree, closest first.
enum class PcieRelation { kSamePcieSwitch, kSameHostBridge, kSameSocket, kAcrossSockets, kUnknown };

/// "same_pcie_switch", "same_host_bridge", "same_socket", "across_sockets", "unknown".
std::string_view PcieRelationName(PcieRelation relation);
std::optional<PcieRelation> ParsePcieRelation(std::string_view name);

struct GpuNicPath {
  std::string gpu;                ///< GPU PCI bus id
  std::string nic;                ///< NIC name
  PcieRelation relation = PcieRelation::kUnknown;
  bool operator==(const GpuNicPath&) const = default;
};

/// What NVML said, or why it could not be asked.
struct NvmlFacts {
  std::string status;             ///< "ok" or the reason ("no NVIDIA driver")
  std::string driver_version;
  bool operator==(const NvmlFacts&) const = default;
};

struct HostLayout {
  std::string hostname;           ///< as the layout source reports it (may be empty)
  std::string source;             ///< "hwloc-live" or "hwloc-xml:<file name>"
  std::string architecture;       ///< "x86_64", "ppc64le", "aarch64", ...
  int packages = 0;
  int cores = 0;
  int pus = 0;
  std::vector<NumaNode> numa_nodes;  ///< by OS index
  std::vector<Gpu> gpus;          ///< in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::vector<Nic> nics;          ///< by name
  std::vector<GpuNicPath> gpu_nic_paths;  ///< every GPU x every openfabrics NIC
  std::vector<PciBridge> pci_bridges;  ///< every bridge above a GPU or NIC, by bus id; empty when unknown
  std::optional<NvmlFacts> nvml;
  bool operator==(const HostLayout&) const = default;
};

/// The bridges from the host bridge down to `bridge` (a pci_parent), top
/// first, bridge last; empty for an empty id. An id the layout does not list
/// ends the chain, and a loop (only in a broken layout) is cut, so this
/// always returns.
std::vector<const PciBridge*> PciBridgeChain(const HostLayout& layout, std::string_view bridge);

/// "0-3,8,10-11" for {0,1,2,3,8,10,11}; empty string for none.
std::string FormatCpuList(const std::vector<int>& cpus);

/// Parses the Linux cpulist form ("0-3,8"); every problem names `where`.
Result<std::vector<int>> ParseCpuList(std::string_view text, std::string_view where);

}  // namespace topolaunch
