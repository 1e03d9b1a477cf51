// RDMA ports and their GID tables, read from sysfs
// (<root>/<dev>/ports/<p>/{link_layer,state,gids/N,gid_attrs/types/N,gid_attrs/ndevs/N}).
// The root is a parameter, so tests build a fake tree in a temporary folder.
#pragma once

#include <string>
#include <vector>

#include "env/env_facts.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Where the kernel lists RDMA devices.
inline constexpr const char* kSysClassInfiniband = "/sys/class/infiniband";

/// Every port of every device under `root`, by device then port; GID entries
/// that are unpopulated (all-zero GID, or a type file the kernel refuses to
/// read) are left out. A missing `root` means no RDMA device: an empty list.
/// Errors: kUnavailable when `root` exists but cannot be listed.
Result<std::vector<RdmaPort>> ReadRdmaPorts(const std::string& root);

}  // namespace topolaunch
