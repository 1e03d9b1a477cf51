// Which RDMA ports of a host are on the compute fabric, and how a host's
// NICs sit on the leaf switches. Shared by the NCCL_IB_HCA and
// NCCL_CROSS_NIC rules and by the NCCL topology XML writer.
#pragma once

#include <string>
#include <vector>

#include "env/env_facts.h"

namespace topolaunch {

/// The fabric of `facts.host`: InfiniBand when the topology holds a cabled
/// HCA port of the host or sysfs shows an active InfiniBand port (a walk
/// that failed knows less, and must never turn an InfiniBand host into a
/// TCP one), else RoCE when sysfs shows an active Ethernet RDMA port, else
/// TCP.
FabricKind DetectFabricKind(const EnvFacts& facts);

/// True when the topology has no cabled HCA port of `facts.host`: what is
/// known of its InfiniBand ports comes from sysfs alone.
bool FabricUnknownFor(const EnvFacts& facts);

/// The RDMA device name of a host's HCA port: from its CA description, else
/// from the layout NIC with the same node GUID; "" when neither says.
std::string DeviceOf(const TopologyHost& host, const HcaAttachment& hca);

/// Active ports with an InfiniBand link layer, by device then port.
std::vector<ComputePort> ActiveInfinibandPorts(const std::vector<RdmaPort>& ports, const TopologyHost* host);

/// The host's ports on the discovered InfiniBand fabric, by device name then
/// port. A port counts when the topology has it cabled to a switch; its
/// device name comes from the CA description ("node017 mlx5_0") or from the
/// layout NIC with the same node GUID. With `sysfs` (this host's ports), an
/// ACTIVE InfiniBand port the walk did not see (another subnet) counts when
/// the layout shows a GPU under its PCIe switch. When some port's NIC shares
/// a PCIe switch with a GPU, ports whose NIC shares none are dropped. Each
/// openfabrics NIC of the layout (and each uncabled or unnamed port) that is
/// left out is described in `left_out` ("mlx5_2: not cabled into the
/// discovered fabric").
std::vector<ComputePort> InfinibandComputePorts(const TopologyHost& host, const std::vector<RdmaPort>* sysfs,
                                                std::vector<std::string>* left_out);

/// Active ports with an Ethernet link layer (RoCE), by device then port.
std::vector<ComputePort> RoceComputePorts(const std::vector<RdmaPort>& ports, const TopologyHost* host);

/// The compute ports of `facts.host` for `kind` (empty for TCP). On
/// InfiniBand with no fabric known for the host: its active InfiniBand
/// ports in sysfs; on RoCE its active Ethernet RDMA ports. Either way only
/// the GPUs' NICs when the layout tells them apart (see compute_ports.cc).
std::vector<ComputePort> ComputePortsFor(const EnvFacts& facts, FabricKind kind, std::vector<std::string>* left_out);

/// NCCL_IB_HCA's exact-match form: "=mlx5_0:1,mlx5_1:1".
std::string FormatIbHca(const std::vector<ComputePort>& ports);

/// How the host's NICs use leaf switches.
enum class NicLeafShape {
  kSingleNic,      ///< fewer than two cabled ports
  kSharedLeaf,     ///< every port of the host on one leaf
  kRailOptimized,  ///< each device name on its own set of leaves, across all hosts
  kMixed,          ///< anything else
};

struct NicLeafAnalysis {
  NicLeafShape shape = NicLeafShape::kSingleNic;
  std::string detail;  ///< one line naming the leaves / rails, for the reason
};

/// Looks at `host`'s cabled ports and, for rails, at every host's.
NicLeafAnalysis AnalyzeNicLeaves(const Topology& topology, const TopologyHost& host);

}  // namespace topolaunch
