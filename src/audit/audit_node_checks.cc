// Judging one node's facts.
//
// HCA ports: Init/Armed is an error (the link trained but the subnet manager
// has not brought it up); Down is a warning, since dual-port cards often
// have one port uncabled, unless no port is Active at all (critical). Rates
// are compared with the node's other InfiniBand ports: a node's rails are
// cabled alike, so a port below the majority is degraded.
//
// GPU PCIe links: the expected link is the lesser of what the GPU and the
// slot above it support, so a Gen5 GPU in a Gen4 slot is not flagged while
// one negotiated at Gen4 in a Gen5 slot, or at x8, is. NVIDIA GPUs drop to
// 2.5 GT/s when idle to save power, so that one speed is only noted (info).
#include <map>

#include <fmt/format.h>

#include "audit/audit_node_checks.h"
#include "audit/audit_nvlink_checks.h"

namespace topolaunch {

namespace {

Finding HostFinding(const std::string& host, std::string check, Severity severity, std::string message) {
  Finding f;
  f.host = host;
  f.check = std::move(check);
  f.severity = severity;
  f.message = std::move(message);
  return f;
}

std::string MajorityOf(const std::vector<std::string>& values) {
  std::map<std::string, int> counts;
  for (const std::string& v : values) ++counts[v];
  for (const auto& [v, n] : counts)
    if (n >= 2 && 2 * n > static_cast<int>(values.size())) return v;
  return "";
}

void CheckIbPorts(const NodeFacts& facts, const NodeCheckOptions& options, AuditReport& report) {
  std::vector<const LocalIbPort*> ib;
  for (const LocalIbPort& p : facts.ib_ports)
    if (p.link_layer.empty() || p.link_layer == "InfiniBand") ib.push_back(&p);
  if (ib.empty()) {
    report.checks_failed_to_run.push_back({"port_state", "no InfiniBand port in /sys/class/infiniband (no HCA, or "
                                                         "its driver is not loaded)"});
    return;
  }
  for (const char* check : {"port_state", "link_down", "link_width", "link_speed", "port_counter"})
    report.checks_run.push_back(check);
  std::vector<std::string> widths, speeds;
  int active = 0;
  for (const LocalIbPort* p : ib)
    if (p->state == "Active") ++active, widths.push_back(p->width), speeds.push_back(p->speed);
  std::string major_width = MajorityOf(widths), major_speed = MajorityOf(speeds);
  std::map<std::pair<std::string, int>, const LocalIbPort*> earlier;
  if (options.before)
    for (const LocalIbPort& p : options.before->ib_ports) earlier[{p.device, p.port}] = &p;
  for (const LocalIbPort* p : ib) {
    std::string name = fmt::format("{} port {}", p->device, p->port);
    auto add = [&](std::string check, Severity s, std::string message, std::vector<std::string> reasons) {
      Finding f = HostFinding(facts.host, std::move(check), s, std::move(message));
      f.port = p->port;
      f.reasons = std::move(reasons);
      report.findings.push_back(std::move(f));
    };
    if (p->state == "Init" || p->state == "Armed")
      add("port_state", Severity::kError, fmt::format("{} is physically up but {}, not Active", name, p->state),
          {fmt::format("phys_state {}", p->phys_state)});
    if (p->state == "Down")
      add("link_down", active == 0 ? Severity::kCritical : Severity::kWarning, fmt::format("{} has no link", name),
          {fmt::format("phys_state {}", p->phys_state.empty() ? "unknown" : p->phys_state)});
    if (p->state == "Active" && !major_width.empty() && LinkRateGbps(p->width, "SDR") < LinkRateGbps(major_width, "SDR"))
      add("link_width", Severity::kError, fmt::format("{} runs {} while most of this node's ports run {}", name, p->width, major_width), {"peer majority (this node's ports)"});
    if (p->state == "Active" && !major_speed.empty() && LinkRateGbps("1X", p->speed) < LinkRateGbps("1X", major_speed))
      add("link_speed", Severity::kError, fmt::format("{} runs {} while most of this node's ports run {}", name, p->speed, major_speed), {"peer majority (this node's ports)"});
    const CounterValues* before = nullptr;
    if (options.interval_s > 0) {
      auto it = earlier.find({p->device, p->port});
      if (it == earlier.end()) continue;
      before = &it->second->counters;
    }
    std::vector<std::string> reasons = CounterReasons(p->counters, before, options.interval_s, options.thresholds);
    if (!reasons.empty())
      add("port_counter", Severity::kError, fmt::format("error counters of {} above threshold", name), std::move(reasons));
  }
}

std::string Gen(double gts) { return fmt::format("{:g} GT/s", gts); }

void CheckGpuLinks(const NodeFacts& facts, AuditReport& report) {
  report.checks_run.push_back("gpu_pcie_link");
  for (const LocalPciLink& g : facts.gpus) {
    double want_gts = g.slot_max_gts > 0 ? std::min(g.max_gts, g.slot_max_gts) : g.max_gts;
    int want_width = g.slot_max_width > 0 ? std::min(g.max_width, g.slot_max_width) : g.max_width;
    std::vector<std::string> reasons;
    Severity severity = Severity::kError;
    if (g.current_width > 0 && want_width > 0 && g.current_width < want_width)
      reasons.push_back(fmt::format("width x{} below x{} (device max x{}, slot max x{})", g.current_width, want_width,
                                    g.max_width, g.slot_max_width));
    if (g.current_gts > 0 && want_gts > 0 && g.current_gts + 0.01 < want_gts) {
      bool idle_floor = g.vendor == "nvidia" && g.current_gts <= 2.5 && reasons.empty();
      if (idle_floor) severity = Severity::kInfo;
      reasons.push_back(fmt::format("speed {} below {} (device max {}, slot max {}){}", Gen(g.current_gts), Gen(want_gts),
                                    Gen(g.max_gts), g.slot_max_gts > 0 ? Gen(g.slot_max_gts) : "unknown",
                                    idle_floor ? "; an idle NVIDIA GPU drops to 2.5 GT/s to save power" : ""));
    }
    if (reasons.empty()) continue;
    Finding f = HostFinding(facts.host, "gpu_pcie_link", severity,
                            fmt::format("GPU {} PCIe link {} x{}, expected {} x{}", g.bus_id, Gen(g.current_gts),
                                        g.current_width, Gen(want_gts), want_width));
    f.reasons = std::move(reasons);
    report.findings.push_back(std::move(f));
  }
}

void CheckGpuCount(const std::string& host, size_t found, std::optional<int> expect, AuditReport& report) {
  if (!expect) return;
  report.checks_run.push_back("gpu_count");
  if (static_cast<int>(found) == *expect) return;
  Finding f = HostFinding(host, "gpu_count", Severity::kError,
                          fmt::format("{} GPUs found, {} expected", found, *expect));
  f.reasons.push_back("--expect-gpus " + std::to_string(*expect));
  report.findings.push_back(std::move(f));
}

void CheckNuma(const std::string& host, int node, bool has_cpus, unsigned long long bytes, AuditReport& report) {
  if (!has_cpus || bytes > 0) return;
  Finding f = HostFinding(host, "numa_memory", Severity::kWarning,
                          fmt::format("NUMA node {} has CPUs but no memory", node));
  f.reasons.push_back("its CPUs' memory is remote: a DIMM missing or disabled?");
  report.findings.push_back(std::move(f));
}

}  // namespace

void CheckNode(const NodeFacts& facts, const NodeCheckOptions& options, AuditReport& report) {
  for (const CheckFailure& f : facts.unreadable) report.checks_failed_to_run.push_back(f);
  CheckIbPorts(facts, options, report);
  CheckGpuLinks(facts, report);
  CheckGpuCount(facts.host, facts.gpus.size(), options.expect_gpus, report);
  report.checks_run.push_back("numa_memory");
  for (const LocalNuma& n : facts.numa) CheckNuma(facts.host, n.node, n.has_cpus, n.memory_bytes, report);
  CheckNvlinkFabric(facts.nvml_gpus, facts.host, report);
}

void CheckLayout(const HostLayout& layout, const std::string& host, std::optional<int> expect_gpus,
                 AuditReport& report) {
  report.checks_run.push_back("gpu_pcie_link");
  std::map<std::string, std::vector<double>> by_model;
  for (const Gpu& g : layout.gpus)
    if (g.link) by_model[g.model].push_back(g.link->gbytes_per_s);
  for (const Gpu& g : layout.gpus) {
    if (!g.link) continue;
    std::vector<std::string> rates;
    for (double r : by_model[g.model]) rates.push_back(fmt::format("{:.2f}", r));
    std::string major = MajorityOf(rates);
    if (major.empty() || g.link->gbytes_per_s + 0.01 >= std::stod(major)) continue;
    Finding f = HostFinding(host, "gpu_pcie_link", Severity::kError,
                            fmt::format("GPU {} PCIe link {:.2f} GB/s, its peers ({}) run {} GB/s", g.pci_bus_id,
                                        g.link->gbytes_per_s, g.model.empty() ? "same model" : g.model, major));
    f.reasons.push_back("peer majority: hwloc reports only the negotiated bandwidth");
    report.findings.push_back(std::move(f));
  }
  CheckGpuCount(host, layout.gpus.size(), expect_gpus, report);
  report.checks_run.push_back("numa_memory");
  for (const NumaNode& n : layout.numa_nodes) CheckNuma(host, n.os_index, !n.cpus.empty(), n.memory_bytes, report);
}

}  // namespace topolaunch
