// Reads one node's facts for `audit --local` from sysfs: RDMA ports under
// /sys/class/infiniband, GPUs and their PCIe links under /sys/bus/pci/devices,
// NUMA nodes under /sys/devices/system/node. Everything is read below a root
// directory, so tests point it at a fake tree.
#pragma once

#include <string>

#include "audit/audit_node_checks.h"

namespace topolaunch {

/// Reads the facts below `root` ("/" for this machine). Never fails: a part
/// that exists but cannot be read is listed in `unreadable`; a part that is
/// absent (no HCA, no GPU) is simply empty. `host` is copied into the facts.
NodeFacts ReadNodeFacts(const std::string& root, const std::string& host);

}  // namespace topolaunch
