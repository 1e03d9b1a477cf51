#include "rankmap/audit_health.h"

#include <fmt/format.h>

#include "audit/audit_json_read.h"

namespace topolaunch {

namespace {

// The host whose HCA is cabled to `switch_guid` port `port`, if any.
std::optional<std::string> HostOnPort(const Topology* topology, Guid switch_guid, int port) {
  if (!topology) return std::nullopt;
  for (const TopologyHost& host : topology->hosts)
    for (const HcaAttachment& hca : host.hcas)
      if (hca.switch_guid == switch_guid && hca.switch_port == port) return host.name;
  return std::nullopt;
}

}  // namespace

Result<std::map<std::string, std::string>> ReadUnhealthyHosts(std::string_view text, std::string_view file_name,
                                                             const Topology* topology) {
  Result<AuditReport> report = ParseAuditJson(text, file_name);
  if (!report.ok()) return report.take_error();
  std::map<std::string, std::string> unhealthy;
  for (const Finding& f : report->findings) {
    if (f.severity < Severity::kError) continue;
    std::optional<std::string> host;
    if (!f.host.empty()) host = f.host;
    else if (f.switch_guid && f.port) host = HostOnPort(topology, *f.switch_guid, *f.port);
    if (!host) continue;
    std::string reason = fmt::format("audit {} {}: {}", SeverityName(f.severity), f.check, f.message);
    auto [it, fresh] = unhealthy.emplace(*host, reason);
    if (!fresh && it->second.find(" (and more)") == std::string::npos) it->second += " (and more)";
  }
  return unhealthy;
}

}  // namespace topolaunch
