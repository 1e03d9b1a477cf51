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

/// Fills GPU model names, NVLink peers and NVLink fabric info (GB200-class
/// multi-node NVLink) in `layout` (matched by PCI bus id) and returns what
/// NVML said. Without libnvidia-ml the status is
/// "no NVIDIA driver" and `layout` is unchanged; when the library is there
/// but nvmlInit fails, "NVML init failed: <NVML's reason>". Never fails.
///
/// NVLink peers are the GPUs at the other end of each active link. A link
/// that ends at something that is not a GPU of `layout` is an NVSwitch: every
/// GPU with such a link is a peer of every other one.
NvmlFacts ProbeNvml(HostLayout& layout);

/// A layout of just the NVIDIA GPUs at `bus_ids` (as sysfs lists them),
/// with what NVML says of them (model, NVLink peers, fabric info) and its
/// status: for the node checks, which read sysfs rather than hwloc.
HostLayout NvmlGpuLayout(const std::vector<std::string>& bus_ids);

/// Sets each GPU's `nvlink_peers` from `remotes`: GPU bus id -> the bus ids
/// at the far end of its active NVLinks (as NVML reports them, normalized).
/// Ends that are GPUs of `layout` are peers; an end that is not is an
/// NVSwitch, and all GPUs with such an end are peers of each other. GPUs not
/// in `remotes` keep their peers. Pure; used by ProbeNvml.
void SetNvLinkPeers(HostLayout& layout, const std::map<std::string, std::vector<std::string>>& remotes);

/// NVML's GPU fabric info as a GpuFabric: `uuid` the 16-byte cluster UUID,
/// `status` the registration's nvmlReturn_t (`status_text` its
/// nvmlErrorString), `state` nvmlGpuFabricState_t, `health_mask` the _v2
/// healthMask when the driver has nvmlDeviceGetGpuFabricInfoV. nullopt for
/// state NOT_SUPPORTED (no multi-node NVLink: PCIe, HGX) or a state this
/// code does not know, and for a completed registration without error under
/// the all-zero UUID (HGX boards: NVLink inside the host only). Pure; used
/// by ProbeNvml.
std::optional<GpuFabric> GpuFabricFromNvml(const unsigned char (&uuid)[16], int status, std::string_view status_text,
                                           unsigned clique_id, unsigned state, std::optional<unsigned> health_mask);

/// The issues a _v2 healthMask reports, by GpuFabric's names: two-bit
/// fields (0 not supported, 1 true, 2 false) for degraded bandwidth at bit
/// 0, route recovery at 2, route unhealthy at 4, access timeout recovery at
/// 6; a four-bit field at 8 whose values from 2 name an incorrect
/// configuration (NVML 13 drivers).
std::vector<std::string> GpuFabricHealthIssues(unsigned health_mask);

/// A PCI bus id in the form hwloc and topology.json use: "0000:07:00.0",
/// lowercase, 4-digit domain. Accepts NVML's 8-digit domain
/// ("00000000:07:00.0"), upper case, and a missing domain ("07:00.0").
/// nullopt when `text` is not domain:bus:device.function.
std::optional<std::string> NormalizePciBusId(std::string_view text);

}  // namespace topolaunch
