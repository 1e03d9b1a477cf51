// The passes of `audit`: read the inputs, run the checks, collect the report.
//
// Every part that touches the world (fabric walk, MADs, sysfs) runs under
// the one deadline the caller set, so a prolog never hangs: the live walk's
// watchdog ends the process at the deadline (options.live.past_deadline),
// the counter source abandons its thread there, and the node facts are read
// on a helper thread for the same reason (a wedged driver can block a sysfs
// read).
#include "audit/audit_pipeline.h"

#include <thread>

#include <fmt/format.h>

#include "core/call_by_deadline.h"
#include "core/text_io.h"
#include "audit/audit_fabric_checks.h"
#include "audit/audit_nvlink_checks.h"
#include "audit/audit_node_checks.h"
#include "audit/audit_sysfs_reader.h"
#include "discover/hwloc_layout_source.h"
#include "discover/ibnetdiscover_parser.h"
#include "topolaunch/topology_json.h"

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

Result<Topology> ReadTopologyFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.take_error();
  return ParseTopologyJson(*text, path);
}

Result<Fabric> LoadFabric(const AuditOptions& o) {
  if (o.fabric == "live") {
    LiveFabricOptions live = o.live;
    live.timeout = Remaining(o.deadline);
    return IbnetdiscFabricSource(live).LoadFabric();
  }
  Result<std::string> text = ReadTextFile(o.fabric);
  if (!text.ok()) return text.take_error();
  if (HasIbnetdiscCacheMagic(*text)) return IbnetdiscCacheFabricSource(o.fabric).LoadFabric();
  return ParseIbnetdiscover(*text, o.fabric);
}

// Reads sysfs and NVML on a helper thread; nullopt when they did not answer
// by the deadline.
std::optional<NodeFacts> ReadFactsBy(const std::string& root, const std::string& host, Clock::time_point deadline) {
  return CallByDeadline<NodeFacts>([root, host] { return ReadNodeFacts(root, host); }, deadline);
}

Error Late(std::string what) { return Error(ErrorCode::kTimeout, "audit", what + " did not finish before --timeout"); }

Status RunLocal(const AuditOptions& o, const CounterThresholds& thresholds, AuditReport& report) {
  std::optional<NodeFacts> first = ReadFactsBy(o.sysfs_root, o.host, o.deadline);
  if (!first) return Late("reading sysfs");
  std::optional<NodeFacts> second;
  NodeCheckOptions checks;
  checks.expect_gpus = o.expect_gpus;
  checks.thresholds = thresholds;
  if (o.interval_s > 0) {
    if (Clock::now() + std::chrono::duration<double>(o.interval_s) >= o.deadline) return Late("the counter interval");
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    second = ReadFactsBy(o.sysfs_root, o.host, o.deadline);
    if (!second) return Late("reading sysfs");
    checks.interval_s = o.interval_s;
    checks.before = &*first;
  }
  CheckNode(second ? *second : *first, checks, report);
  return Ok{};
}

Status ReadCounters(const AuditOptions& o, const Fabric& fabric, const Topology& topology,
                    const CounterThresholds& thresholds, AuditReport& report) {
  std::vector<CounterTarget> targets = CounterTargets(fabric);
  if (targets.empty()) {
    report.checks_failed_to_run.push_back({"port_counter", "no Active port with a LID: is a subnet manager running?"});
    return Ok{};
  }
  MadPortCounterSource source(o.counters);
  Result<CounterPass> first = source.Read(targets, o.deadline);
  if (!first.ok() && first.error().code == ErrorCode::kTimeout) return first.take_error();
  if (!first.ok()) {
    report.checks_failed_to_run.push_back({"port_counter", first.error().Message()});
    return Ok{};
  }
  std::optional<CounterPass> second;
  if (o.interval_s > 0) {
    if (Clock::now() + std::chrono::duration<double>(o.interval_s) >= o.deadline) return Late("the counter interval");
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    Result<CounterPass> again = source.Read(targets, o.deadline);
    if (!again.ok()) return again.take_error();
    second = std::move(again).value();
  }
  const CounterPass& last = second ? *second : *first;
  report.checks_run.push_back("port_counter");
  if (!last.unanswered.empty())
    report.checks_failed_to_run.push_back(
        {"port_counter", fmt::format("{} of {} ports did not answer the performance query (first: {})",
                                     last.unanswered.size(), targets.size(), last.unanswered.front())});
  std::vector<Finding> found = JudgeCounters(last.samples, second ? first->samples : std::vector<CounterSample>{},
                                             o.interval_s, thresholds, PortNaming(topology));
  report.findings.insert(report.findings.end(), found.begin(), found.end());
  return Ok{};
}

void Append(AuditReport& report, std::initializer_list<const char*> checks, std::vector<Finding> found) {
  for (const char* c : checks) report.checks_run.push_back(c);
  for (Finding& f : found) report.findings.push_back(std::move(f));
}

Status RunFabric(const AuditOptions& o, const CounterThresholds& thresholds, AuditReport& report) {
  NodeNameMap names;
  if (!o.node_name_map_file.empty()) {
    Result<std::string> text = ReadTextFile(o.node_name_map_file);
    if (!text.ok()) return text.take_error();
    Result<NodeNameMap> parsed = ParseNodeNameMap(*text, o.node_name_map_file);
    if (!parsed.ok()) return parsed.take_error();
    names = std::move(parsed).value();
  }
  std::optional<Topology> expected;
  if (!o.expected_file.empty()) {
    Result<Topology> t = ReadTopologyFile(o.expected_file);
    if (!t.ok()) return t.take_error();
    expected = std::move(t).value();
  }
  Fabric fabric;
  Topology topology;
  if (!o.topology_file.empty()) {
    Result<Topology> t = ReadTopologyFile(o.topology_file);
    if (!t.ok()) return t.take_error();
    topology = std::move(t).value();
    fabric = FabricFromTopology(topology);
  } else {
    Result<Fabric> f = LoadFabric(o);
    if (!f.ok() && f.error().code == ErrorCode::kUnavailable) {
      report.checks_failed_to_run.push_back({"fabric", f.error().Message()});
      return Ok{};
    }
    if (!f.ok()) return f.take_error();
    fabric = std::move(f).value();
    topology = BuildTopology(fabric, names, report.generated);
  }
  report.generated.fabric_source = fabric.source;
  Append(report, {"link_width", "link_speed"}, CheckLinkRates(fabric, topology));
  Append(report, {"port_state"}, CheckPortStates(fabric, topology));
  Append(report, {"host_rail_count", "default_node_description", "unmapped_ca"}, CheckHosts(fabric, topology));
  if (expected) Append(report, {"link_down"}, CheckExpectedLinks(fabric, *expected));
  for (const TopologyHost& host : topology.hosts)
    if (host.layout) {
      CheckLayout(*host.layout, host.name, o.expect_gpus, report);
      CheckNvlinkFabric(*host.layout, host.name, report);
    }
  if (o.fabric == "live" && o.read_counters) return ReadCounters(o, fabric, topology, thresholds, report);
  return Ok{};
}

}  // namespace

Result<AuditReport> RunAudit(const AuditOptions& o) {
  AuditReport report;
  report.generated = o.generated;
  report.generated.fabric_source = "none";
  CounterThresholds thresholds = DefaultCounterThresholds();
  if (!o.thresholds_file.empty()) {
    Result<std::string> text = ReadTextFile(o.thresholds_file);
    if (!text.ok()) return text.take_error();
    Result<CounterThresholds> parsed = ParseCounterThresholds(*text, o.thresholds_file, thresholds);
    if (!parsed.ok()) return parsed.take_error();
    thresholds = std::move(parsed).value();
  }
  if (!o.hwloc_xml.empty()) {
    Result<HostLayout> layout = HwlocLayoutSource::FromXmlFile(o.hwloc_xml).LoadLayout();
    if (!layout.ok()) return layout.take_error();
    std::string host = !layout->hostname.empty() ? layout->hostname : o.host;
    CheckLayout(*layout, host, o.local ? std::nullopt : o.expect_gpus, report);
    CheckNvlinkFabric(*layout, host, report);
  }
  Status status = Ok{};
  if (o.local) status = RunLocal(o, thresholds, report);
  if (status.ok() && (!o.fabric.empty() || !o.topology_file.empty())) status = RunFabric(o, thresholds, report);
  if (!status.ok()) return status.take_error();
  NormalizeReport(report);
  return report;
}

}  // namespace topolaunch
