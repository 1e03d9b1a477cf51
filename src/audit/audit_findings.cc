// Severity names, ordering and the exit status of an audit.
#include "audit/audit_findings.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace topolaunch {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
    case Severity::kCritical: return "critical";
  }
  return "error";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kError, Severity::kCritical})
    if (SeverityName(s) == name) return s;
  return std::nullopt;
}

void NormalizeReport(AuditReport& report) {
  std::sort(report.checks_run.begin(), report.checks_run.end());
  report.checks_run.erase(std::unique(report.checks_run.begin(), report.checks_run.end()), report.checks_run.end());
  auto key = [](const Finding& f) {
    return std::make_tuple(-static_cast<int>(f.severity), f.switch_guid.value_or(0), f.port.value_or(0), f.check);
  };
  std::stable_sort(report.findings.begin(), report.findings.end(), [&](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.host != b.host) return NaturalLess(a.host, b.host);
    return key(a) < key(b);
  });
}

int AuditExitStatus(const AuditReport& report, Severity fail_on) {
  if (!report.checks_failed_to_run.empty()) return 3;
  for (const Finding& f : report.findings)
    if (f.severity >= fail_on) return 1;
  return 0;
}

std::string FindingLocation(const Finding& finding) {
  std::string out;
  if (finding.switch_guid) {
    out = fmt::format("switch {}", FormatGuid(*finding.switch_guid));
    if (!finding.switch_name.empty()) out += "/" + finding.switch_name;
    if (finding.port) out += fmt::format(" port {}", *finding.port);
  } else if (!finding.host.empty() && finding.port) {
    out = fmt::format("{} port {}", finding.host, *finding.port);
  }
  if (finding.peer) {
    const FindingPeer& p = *finding.peer;
    std::string name;
    if (p.kind == "switch") {
      name = "switch " + FormatGuid(p.guid) + (p.name.empty() ? "" : "/" + p.name);
    } else {
      name = p.name.empty() ? FormatGuid(p.guid) : p.name;
      if (!p.device.empty()) name += " " + p.device;
    }
    out += fmt::format(" ↔ {} port {}", name, p.port);
  }
  return out;
}

}  // namespace topolaunch
