// The findings of `topolaunch audit` and their three renderings.
//
// Every check produces Findings; the report also says which checks ran and
// which could not (a check that could not run is never silence: it makes the
// audit exit 3). The JSON form (schema topolaunch.audit/1) is read by `plan`,
// which treats a host with an error or critical finding as unhealthy, so
// `severity` and `host` keep their names and values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/fabric.h"
#include "topolaunch/topology.h"

namespace topolaunch {

inline constexpr std::string_view kAuditSchema = "topolaunch.audit/1";

/// Ordered from least to most severe.
enum class Severity { kInfo, kWarning, kError, kCritical };

/// "info", "warning", "error", "critical".
std::string_view SeverityName(Severity severity);
/// The inverse of SeverityName; nullopt for anything else.
std::optional<Severity> ParseSeverity(std::string_view name);

/// The other end of a cable a finding is about.
struct FindingPeer {
  std::string kind;         ///< "switch" or "host" (or "ca" for an unnamed CA)
  Guid guid = 0;
  std::string name;         ///< switch name or host name
  std::string device;       ///< "mlx5_0" for a host end, when known
  int port = 0;
  bool operator==(const FindingPeer&) const = default;
};

/// One thing found wrong (or worth knowing).
struct Finding {
  Severity severity = Severity::kError;
  std::string check;                ///< "link_width", "port_counter", ...
  std::string host;                 ///< the host concerned; empty for fabric-only findings
  std::optional<Guid> switch_guid;  ///< the switch end, when a switch port is involved
  std::string switch_name;
  std::optional<int> port;          ///< that switch's port (or the host's HCA port without a switch)
  std::optional<FindingPeer> peer;  ///< the other end
  std::string message;              ///< one line, says what and where
  std::vector<std::string> reasons; ///< why it was judged so, one per rule that fired
  bool operator==(const Finding&) const = default;
};

/// A check that could not run, and why (no HCA, no permission, timeout).
struct CheckFailure {
  std::string check;
  std::string reason;
  bool operator==(const CheckFailure&) const = default;
};

struct AuditReport {
  Generated generated;  ///< by, at, fabric_source ("none" for --local)
  std::vector<std::string> checks_run;
  std::vector<CheckFailure> checks_failed_to_run;
  std::vector<Finding> findings;
  bool operator==(const AuditReport&) const = default;
};

/// Sorts findings most severe first, then by host, switch, port, check, so
/// output is stable; removes duplicate check names.
void NormalizeReport(AuditReport& report);

/// The topolaunch.audit/1 document, pretty-printed, ending in a newline.
std::string FormatAuditJson(const AuditReport& report);

/// The report for people: findings grouped by severity, then what could not
/// be checked, then a one-line verdict. Within a severity, more than
/// kAlikeShownOneByOne findings of one check with the same reasons (174 SHARP
/// aggregation nodes) are one entry with their count, the first of them and
/// the hosts they name, unless `verbose`; JSON always keeps every finding.
inline constexpr size_t kAlikeShownOneByOne = 3;
std::string FormatAuditText(const AuditReport& report, bool verbose = false);

/// One line for a Slurm drain reason: "ok", or the most severe findings
/// ("audit: 2 error: mlx5_0 port 1 Init; gpu 0000:07:00.0 pcie 16GT/s x8"),
/// at most `max_chars`, letters/digits and " .,:;/_=-()<>" only, no newline.
std::string FormatAuditProlog(const AuditReport& report, size_t max_chars = 200);

/// SPEC.md's exit status: 3 when a check could not run, else 1 when a
/// finding is at or above `fail_on`, else 0.
int AuditExitStatus(const AuditReport& report, Severity fail_on);

/// "switch 0x.../leaf01 port 3 <-> node01 mlx5_0 port 1" style location of a
/// finding (empty when it names no port).
std::string FindingLocation(const Finding& finding);

}  // namespace topolaunch
