#include "audit/audit_nvlink_checks.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/nvlink_domains.h"

namespace topolaunch {

namespace {

Finding GpuFinding(const std::string& host, std::string check, Severity severity, std::string message,
                   std::string reason) {
  Finding f;
  f.host = host;
  f.check = std::move(check);
  f.severity = severity;
  f.message = std::move(message);
  f.reasons.push_back(std::move(reason));
  return f;
}

std::string Clique(const GpuFabric& f) { return fmt::format("clique {} of cluster {}", f.clique_id, f.cluster_uuid); }

}  // namespace

void CheckNvlinkFabric(const HostLayout& layout, const std::string& host, AuditReport& report) {
  if (std::none_of(layout.gpus.begin(), layout.gpus.end(), [](const Gpu& g) { return g.nvlink_fabric.has_value(); }))
    return;
  for (const char* check : {"nvlink_fabric_state", "nvlink_clique", "nvlink_fabric_health"})
    report.checks_run.push_back(check);
  std::optional<std::pair<std::string, unsigned>> home = HostNvlinkDomainKey(layout);
  size_t with_fabric = 0;
  for (const Gpu& g : layout.gpus) with_fabric += g.nvlink_fabric.has_value();
  for (const Gpu& g : layout.gpus) {
    if (!g.nvlink_fabric) {
      // Its peers are in a fabric and it is not: hwloc sees it, NVML does not place it.
      report.findings.push_back(GpuFinding(
          host, "nvlink_fabric_state", Severity::kError,
          fmt::format("GPU {} has no NVLink fabric info while {} other GPU(s) of the host do", g.pci_bus_id, with_fabric),
          "NVML gave no fabric info for it: fallen off the fabric, or a different board?"));
      continue;
    }
    const GpuFabric& f = *g.nvlink_fabric;
    if (f.status != "ok")
      report.findings.push_back(GpuFinding(host, "nvlink_fabric_state", Severity::kError,
                                           fmt::format("GPU {} failed to register with the NVLink fabric: {}",
                                                       g.pci_bus_id, f.status),
                                           "NVML's fabric status is an error: the GPU cannot use multi-node NVLink"));
    else if (f.state != "completed")
      report.findings.push_back(GpuFinding(
          host, "nvlink_fabric_state", Severity::kError,
          fmt::format("GPU {} NVLink fabric registration is {}, not completed", g.pci_bus_id, f.state),
          "NCCL turns multi-node NVLink off for a whole job when one rank's GPU has not completed registration "
          "(mnnvl.cc): every job with this host would go over InfiniBand. Is the fabric manager up for this tray?"));
    else if (home && std::pair(f.cluster_uuid, f.clique_id) != *home)
      report.findings.push_back(GpuFinding(
          host, "nvlink_clique", Severity::kError,
          fmt::format("GPU {} is in {}, the host's other GPUs in clique {} of cluster {}", g.pci_bus_id, Clique(f),
                      home->second, home->first),
          "GPUs of one host in different cliques cannot reach each other over the NVLink fabric: the tray is "
          "split (fabric manager partition, or a cabling fault)"));
    if (!f.health.empty())
      report.findings.push_back(GpuFinding(host, "nvlink_fabric_health", Severity::kWarning,
                                           fmt::format("GPU {} NVLink fabric health: {}", g.pci_bus_id,
                                                       fmt::join(f.health, ", ")),
                                           "NVML's fabric health mask: the fabric works, at less than full speed"));
  }
}

}  // namespace topolaunch
