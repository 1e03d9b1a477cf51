// `audit` with real sources: reads the fabric (live, a dump, a cache, or a
// topology.json), the counters over the fabric, this node's sysfs or an
// hwloc XML, and runs every check under one deadline.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "audit/audit_counters_source.h"
#include "audit/audit_findings.h"
#include "discover/ibnetdisc_fabric_source.h"

namespace topolaunch {

struct AuditOptions {
  bool local = false;             ///< node checks of this machine (sysfs)
  std::string fabric;             ///< "", "live", or FILE (ibnetdiscover dump or cache)
  std::string topology_file;      ///< a topology.json instead of --fabric
  std::string expected_file;      ///< baseline topology.json: its cables must be up
  std::string node_name_map_file;
  std::string hwloc_xml;          ///< one host's layout to check
  LiveFabricOptions live;         ///< its timeout is replaced by the deadline
  CounterQueryOptions counters;
  bool read_counters = true;      ///< with a live fabric
  std::string thresholds_file;
  double interval_s = 0;          ///< two counter samples this far apart
  std::optional<int> expect_gpus;
  std::string sysfs_root = "/";
  std::string host;               ///< this machine's name, for --local findings
  std::chrono::steady_clock::time_point deadline;
  Generated generated;            ///< by, at; fabric_source is filled in
  std::function<void(std::string_view)> note;
};

/// Runs the audit. A check that could not run is in the report
/// (checks_failed_to_run), not an error. Errors: kBadInput/kBadUsage for the
/// user's files and flags; kTimeout when the deadline passed inside a part
/// that cannot be cancelled (MADs, a sysfs read): the caller must then leave
/// with _Exit (see IbnetdiscFabricSource). A fabric walk past the deadline
/// does not return: it calls options.live.past_deadline.
Result<AuditReport> RunAudit(const AuditOptions& options);

/// A fabric with the nodes, ports and cables a topology.json records, so a
/// saved topology can be audited with the same checks (no supported rates,
/// no unlinked ports).
Fabric FabricFromTopology(const Topology& topology);

}  // namespace topolaunch
