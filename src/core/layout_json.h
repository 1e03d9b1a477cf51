// A HostLayout as JSON: the "layout" object of each host in topology.json.
//
// Shape (keys as written):
//   {"hostname", "source", "architecture", "packages", "cores", "pus",
//    "numa_nodes": [{"os_index", "package", "cpus": "0-15,32-47", "memory_bytes"}],
//    "gpus": [{"pci_bus_id", "vendor", "model", "os_devices": [..], "numa",
//              "link_gbytes_per_s": number|null, "nvlink_peers": [..]}],
//    "nics": [{"name", "kind", "pci_bus_id", "netdevs": [..], "node_guid": "0x..."|null,
//              "numa", "link_gbytes_per_s": number|null}],
//    "gpu_nic_paths": [{"gpu", "nic", "relation"}],
//    "nvml": {"status", "driver_version"}   (only when NVML was asked)}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topolaunch/layout.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// The layout as a JSON object. CPU sets are cpulist strings (FormatCpuList),
/// optional values are null, `nvml` is left out when absent.
nlohmann::json LayoutToJson(const HostLayout& layout);

/// Reads and validates a layout object found at `json_path` ("$.hosts[3].layout").
/// Every problem is reported at once, each `where` being the JSON path of the
/// offending field ("$.hosts[3].layout.gpus[0].numa"), without a file name:
/// the caller adds it. kBadInput.
Result<HostLayout> LayoutFromJson(const nlohmann::json& json, const std::string& json_path);

}  // namespace topolaunch
