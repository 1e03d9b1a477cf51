// Reads one node's facts for `audit --local` from sysfs: RDMA ports under
// /sys/class/infiniband, GPUs and their PCIe links under /sys/bus/pci/devices,
// NUMA nodes under /sys/devices/system/node. Everything is read below a root
// directory, so tests point it at a fake tree. On the live machine (root
// "/") the NVIDIA GPUs found there are also asked of NVML, for the NVLink
// fabric checks; a fake tree has no driver behind it.
#pragma once

#include <string>

#include "audit/audit_node_checks.h"

namespace topolaunch {

/// Reads the facts below `root` ("/" for this machine). Never fails: a part
/// that exists but cannot be read is listed in `unreadable`; a part that is
/// absent (no HCA, no GPU) is simply empty. `host` is copied into the facts.
/// With root "/", `nvml_gpus` holds the NVIDIA GPUs as NVML reports them.
NodeFacts ReadNodeFacts(const std::string& root, const std::string& host);

}  // namespace topolaunch
