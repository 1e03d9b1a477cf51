// Per-local-rank bindings: GPU, NUMA node, CPUs and NIC for each local rank
// of one host, and the numactl command line that applies them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/layout.h"
#include "topolaunch/plan.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct BindingOptions {
  int nproc_per_node = 1;
  /// CUDA_VISIBLE_DEVICES as indexes into the PCI-bus-ordered GPU list
  /// (CUDA_DEVICE_ORDER=PCI_BUS_ID); nullopt = every GPU is visible.
  std::optional<std::vector<int>> cuda_visible_devices;
  /// RDMA devices the fabric knows on this host ("mlx5_0"); when some are
  /// in the layout, NICs are chosen among them only (a RoCE/Ethernet port of
  /// the same card is not on the InfiniBand fabric).
  std::vector<std::string> fabric_devices;
};

struct HostBindings {
  std::vector<RankBinding> ranks;   ///< local rank order
  std::vector<std::string> notes;   ///< unbound ranks, unused GPUs, shared CPUs
};

/// Binds `options.nproc_per_node` local ranks of `host` (see bindings.cc for
/// the rules). `layout` null = unknown: ranks unbound, with a note. Errors:
/// kBadUsage when more ranks than visible GPUs (NCCL refuses two ranks on
/// one GPU), kBadInput for a CUDA_VISIBLE_DEVICES index the host lacks.
Result<HostBindings> ComputeBindings(const HostLayout* layout, const std::string& host,
                                     const BindingOptions& options);

/// `numactl --physcpubind=0-15 --membind=0 --` (the caller appends the
/// command); only the parts the binding has; empty when it binds nothing.
std::vector<std::string> NumactlArgs(const RankBinding& binding);

/// Parses a CUDA_VISIBLE_DEVICES value of GPU indexes ("0,1,3"; "" = none).
/// UUIDs ("GPU-...") and MIG ids are refused with kBadUsage naming them.
Result<std::vector<int>> ParseCudaVisibleDevices(std::string_view text);

/// Splits one NUMA node's `cpus` among `ranks` ranks, keeping cores whole
/// where the numbering shows them (see cpu_split.cc); `threads_per_core` is
/// the host's PUs / cores (1 when unknown). Each part ascending.
std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int ranks, int threads_per_core);

}  // namespace topolaunch
