// Node checks of `topolaunch audit --local`: this machine's HCA ports, its
// GPUs' PCIe links, its GPU count and NUMA memory. The facts are read from
// sysfs by ReadNodeFacts (audit_sysfs_reader.h); judging them is pure, so
// tests feed hand-made facts or a fake sysfs tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "audit/audit_counters.h"
#include "audit/audit_findings.h"
#include "topolaunch/layout.h"

namespace topolaunch {

/// One port of a local RDMA device, as /sys/class/infiniband shows it.
struct LocalIbPort {
  std::string device;      ///< "mlx5_0"
  int port = 0;
  std::string state;       ///< "Active", "Init", "Armed", "Down" (sysfs "4: ACTIVE" normalised)
  std::string phys_state;  ///< "LinkUp", "Polling", "Disabled", ...
  std::string link_layer;  ///< "InfiniBand" or "Ethernet"
  std::string width;       ///< "4X" from rate "200 Gb/sec (4X HDR)"; "" when not given
  std::string speed;       ///< "HDR"
  double rate_gbps = 0;
  CounterValues counters;  ///< by infiniband-diags' names
};

/// A GPU's PCIe link: what it negotiated and what it and its slot support.
struct LocalPciLink {
  std::string bus_id;       ///< "0000:07:00.0"
  std::string vendor;       ///< "nvidia" or "amd"
  double current_gts = 0;   ///< GT/s per lane; 0 when unknown
  double max_gts = 0;       ///< the device's maximum
  double slot_max_gts = 0;  ///< the upstream port's maximum; 0 when unknown
  int current_width = 0;
  int max_width = 0;
  int slot_max_width = 0;
};

struct LocalNuma {
  int node = 0;
  bool has_cpus = false;
  unsigned long long memory_bytes = 0;
};

struct NodeFacts {
  std::string host;  ///< this machine's short host name
  std::vector<LocalIbPort> ib_ports;
  std::vector<LocalPciLink> gpus;  ///< by bus id
  std::vector<LocalNuma> numa;
  /// Parts that could not be read: each becomes a check that could not run.
  std::vector<CheckFailure> unreadable;
  /// The NVIDIA GPUs with what NVML says of them (model, NVLink fabric
  /// info), read on the live machine only; no GPUs when not read.
  HostLayout nvml_gpus;
};

struct NodeCheckOptions {
  std::optional<int> expect_gpus;
  CounterThresholds thresholds = DefaultCounterThresholds();
  /// With an interval: `before` holds the first sample's HCA counters.
  double interval_s = 0;
  const NodeFacts* before = nullptr;
};

/// Judges the facts into `report` (findings, checks_run, checks_failed_to_run):
/// port_state / link_down / link_width / link_speed / port_counter for HCA
/// ports, gpu_pcie_link, gpu_count, numa_memory, and the NVLink fabric
/// checks (audit_nvlink_checks.h) on `nvml_gpus`. No InfiniBand port at all
/// is a check that could not run (exit 3).
void CheckNode(const NodeFacts& facts, const NodeCheckOptions& options, AuditReport& report);

/// The same checks on an hwloc layout (XML input): GPU links against peers
/// of the same model (hwloc only has the negotiated GB/s), GPU count, NUMA
/// memory. `host` names the findings.
void CheckLayout(const HostLayout& layout, const std::string& host, std::optional<int> expect_gpus,
                 AuditReport& report);

}  // namespace topolaunch
