// The readable form of one host's layout, for `discover --format text`.
#pragma once

#include <string>

#include "topolaunch/layout.h"

namespace topolaunch {

/// Several lines: the host's CPUs per NUMA node, its GPUs with their NUMA
/// node and PCIe link, its NICs, and for each GPU the nearest RDMA NIC and
/// how it is reached. `indent` prefixes every line.
std::string FormatLayoutSummary(const std::string& host, const HostLayout& layout, const std::string& indent = "");

}  // namespace topolaunch
