// NVLink fabric checks: is each GPU of a multi-node NVLink domain (GB200
// NVL72 and the like) registered, in its host's clique, and healthy?
//
// A GPU whose registration has not completed cannot use the NVLink fabric,
// and NCCL then leaves multi-node NVLink off for every rank of the job
// (mnnvl.cc: all ranks must be registered), falling back to InfiniBand; a
// registration that failed, or a tray whose GPUs landed in two cliques,
// splits the NVLink traffic: errors a prolog should drain the node for.
// Health bits NVML reports (degraded bandwidth, route recovery) are
// warnings: the fabric works, slower. Pure: judges the GPU fabric info a
// layout recorded (topolaunch/layout.h, GpuFabric).
#pragma once

#include <string>

#include "audit/audit_findings.h"
#include "topolaunch/layout.h"

namespace topolaunch {

/// Adds nvlink_fabric_state, nvlink_clique and nvlink_fabric_health
/// findings for `host` to `report`, and those checks to checks_run when a
/// GPU of the layout has fabric info (a host without any is not in an
/// NVLink fabric: nothing to check, nothing said).
void CheckNvlinkFabric(const HostLayout& layout, const std::string& host, AuditReport& report);

}  // namespace topolaunch
