// `topolaunch audit`: fabric and node health, with an exit status a Slurm
// prolog can act on.
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "discover/local_host.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "audit/audit_pipeline.h"

namespace topolaunch::cli {

namespace {

struct AuditFlags {
  AuditOptions audit;
  std::string fail_on = "error";
  bool json = false;
  bool prolog = false;
  bool verbose = false;
  bool no_counters = false;
  double timeout_s = 0;  // 0: 5 s with --local alone, else 120 s
  int expect_gpus = -1;
  std::string output;
};

Status Validate(const AuditFlags& f) {
  const AuditOptions& a = f.audit;
  if (!a.local && a.fabric.empty() && a.topology_file.empty() && a.hwloc_xml.empty())
    return Error(ErrorCode::kBadUsage, "audit", "nothing to audit: give --local, --fabric live|FILE, --topology FILE or --hwloc-xml FILE");
  if (!a.fabric.empty() && !a.topology_file.empty())
    return Error(ErrorCode::kBadUsage, "audit", "--fabric and --topology exclude each other");
  if (f.audit.interval_s >= f.timeout_s)
    return Error(ErrorCode::kBadUsage, "--interval",
                 fmt::format("{:g} s does not fit in --timeout {:g} s (two samples must be taken before the deadline)",
                             f.audit.interval_s, f.timeout_s));
  return Ok{};
}

std::string Render(const AuditFlags& flags, const AuditReport& report) {
  if (flags.json) return FormatAuditJson(report);
  if (flags.prolog) return FormatAuditProlog(report) + "\n";
  std::string text = FormatAuditText(report, flags.verbose);
  // Where the findings are is easier seen than read: say how to draw them.
  const AuditOptions& a = flags.audit;
  if (!a.topology_file.empty())
    text += fmt::format("draw it: the same audit with --json -o audit.json, then: topolaunch show --topology {} --audit audit.json -o audit.html\n",
                        ShellWord(a.topology_file));
  else if (!a.fabric.empty())
    text += fmt::format("draw it: topolaunch discover --fabric {} -o topology.json, the same audit with --json -o audit.json, then: "
                        "topolaunch show --topology topology.json --audit audit.json -o audit.html\n",
                        ShellWord(a.fabric));
  return text;
}

// Threads blocked in libibumad or sysfs remain (or the walk holds the main
// thread itself): say so, then leave at once (ExitAfterTimeout).
[[noreturn]] void EndTimedOut(const AuditFlags& flags, const Error& error) {
  if (flags.prolog) PrintTo(stdout, fmt::format("topolaunch audit: not checked: timeout after {:g} s\n", flags.timeout_s));
  ExitAfterTimeout(error);
}

int RunAuditCommand(AuditFlags& flags) {
  if (flags.timeout_s <= 0) flags.timeout_s = flags.audit.local && flags.audit.fabric.empty() ? 5 : 120;
  if (Status valid = Validate(flags); !valid.ok()) return ReportError(valid.error());
  AuditOptions& a = flags.audit;
  a.deadline = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long long>(flags.timeout_s * 1000));
  a.read_counters = !flags.no_counters;
  if (flags.expect_gpus >= 0) a.expect_gpus = flags.expect_gpus;
  a.host = LocalShortHostName();
  a.generated.by = VersionString();
  a.generated.at = NowRfc3339();
  a.note = [](std::string_view text) { Note(text); };
  a.live.past_deadline = [&flags](const Error& error) { EndTimedOut(flags, error); };
  Result<AuditReport> report = RunAudit(a);
  if (!report.ok() && report.error().code == ErrorCode::kTimeout) EndTimedOut(flags, report.error());
  if (!report.ok()) return ReportError(report.error());
  int written = WriteOutput(flags.output, Render(flags, *report));
  if (written != 0) return written;
  return AuditExitStatus(*report, *ParseSeverity(flags.fail_on));
}

}  // namespace

void AddAuditCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<AuditFlags>();
  CLI::App* cmd = app.add_subcommand("audit", "Check fabric and node health; exit status a Slurm prolog can act on");
  cmd->footer(R"(Examples:
  topolaunch audit --local --prolog                      # this node: HCA ports, GPU PCIe links, NUMA memory
  topolaunch audit --local --expect-gpus 8 --interval 2 --timeout 5
  topolaunch audit --fabric live --expected topology.json --json -o audit.json
  topolaunch audit --fabric live --thresholds /etc/infiniband-diags/error_thresholds --interval 10
  topolaunch audit --fabric fabric.ibnet                 # link widths/speeds and hosts of a saved dump
  topolaunch audit --topology topology.json --fail-on warning

Exit status: 0 healthy, 1 findings at or above --fail-on, 2 bad usage or input,
3 a check could not run (no HCA, no permission, no answer before --timeout).)");
  AuditOptions& a = flags->audit;
  cmd->add_flag("--local", a.local, "check this node: HCA ports (state, rate, counters), GPU PCIe links, NUMA memory");
  cmd->add_option("--fabric", a.fabric, "live, or FILE: an ibnetdiscover dump or an `ibnetdiscover --cache` file");
  cmd->add_option("--topology", a.topology_file, "audit a topology.json (from `discover`) instead of a fabric");
  cmd->add_option("--expected", a.expected_file, "baseline topology.json: every cable in it must be up");
  cmd->add_option("--node-name-map", a.node_name_map_file, "GUID -> name map in infiniband-diags' format");
  cmd->add_option("--hwloc-xml", a.hwloc_xml, "check one host's layout from an hwloc XML file");
  cmd->add_option("--ca", a.live.ca, "local HCA for the live fabric (default: the first)");
  cmd->add_option("--port", a.live.port, "its port (default: the first active)")->check(CLI::Range(0, 255));
  cmd->add_option("--max-smps", a.live.max_smps, "SMPs in flight during the live fabric walk (as discover --max-smps)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--thresholds", a.thresholds_file, "error counter thresholds, infiniband-diags' error_thresholds format");
  cmd->add_option("--interval", a.interval_s, "take two counter samples SECONDS apart and judge the increase")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--expect-gpus", flags->expect_gpus, "GPUs this node (each host) must have")->check(CLI::NonNegativeNumber);
  cmd->add_option("--parallel", a.counters.parallel, "performance queries in flight (live fabric)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--no-counters", flags->no_counters, "do not read port counters over the fabric");
  cmd->add_flag("--reset-counters", a.counters.reset_after, "clear the error counters of each port read");
  cmd->add_option("--fail-on", flags->fail_on, "lowest severity that makes the exit status 1")
      ->check(CLI::IsMember({"info", "warning", "error", "critical"}))
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout_s, "seconds the whole audit may take (default 5 with --local, else 120)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--sysfs-root", a.sysfs_root, "read /sys below this directory (tests, containers)")
      ->capture_default_str();
  auto* json = cmd->add_flag("--json", flags->json, "the findings as topolaunch.audit/1 JSON");
  cmd->add_flag("--prolog", flags->prolog, "one line for a Slurm drain reason (\"ok\" when healthy)")->excludes(json);
  cmd->add_flag("-v,--verbose", flags->verbose, "list every finding, also where many are alike");
  cmd->add_option("-o,--output", flags->output, "write to FILE atomically instead of stdout");
  cmd->callback([flags, &exit_status] { exit_status = RunAuditCommand(*flags); });
}

}  // namespace topolaunch::cli
