// GPU facts from NVML, loaded at run time with dlopen so that topolaunch
// builds without the CUDA Toolkit and runs on machines without a driver.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/layout.h"

namespace topolaunch {

/// Fills GPU model names and NVLink peers in `layout` (matched by PCI bus id)
/// and returns what NVML said. Without libnvidia-ml the status is
/// "no NVIDIA driver" and `layout` is unchanged; when the library is there
/// but nvmlInit fails, "NVML init failed: <NVML's reason>". Never fails.
///
/// NVLink peers are the GPUs at the other end of each active link. A link
/// that ends at something that is not a GPU of `layout` is an NVSwitch: every
/// GPU with such a link is a peer of every other one.
NvmlFacts ProbeNvml(HostLayout& layout);

/// Sets each GPU's `nvlink_peers` from `remotes`: GPU bus id -> the bus ids
/// at the far end of its active NVLinks (as NVML reports them, normalized).
/// Ends that are GPUs of `layout` are peers; an end that is not is an
/// NVSwitch, and all GPUs with such an end are peers of each other. GPUs not
/// in `remotes` keep their peers. Pure; used by ProbeNvml.
void SetNvLinkPeers(HostLayout& layout, const std::map<std::string, std::vector<std::string>>& remotes);

/// A PCI bus id in the form hwloc and topology.json use: "0000:07:00.0",
/// lowercase, 4-digit domain. Accepts NVML's 8-digit domain
/// ("00000000:07:00.0"), upper case, and a missing domain ("07:00.0").
/// nullopt when `text` is not domain:bus:device.function.
std::optional<std::string> NormalizePciBusId(std::string_view text);

}  // namespace topolaunch
