// `topolaunch plan`: choose nodes, order them, bind local ranks.
#include <cstdlib>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/hostfile.h"
#include "core/hostlist.h"
#include "core/text_io.h"
#include "launch/job_spec.h"
#include "rankmap/audit_health.h"
#include "rankmap/bindings.h"
#include "rankmap/plan_builder.h"
#include "rankmap/plan_json.h"
#include "rankmap/plan_launcher_formats.h"
#include "rankmap/plan_table.h"
#include "run/host_pool.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::cli {

namespace {

struct PlanFlags {
  std::string topology;
  std::string hosts;
  std::string hostfile;
  int nnodes = 0;
  int nproc_per_node = 0;
  std::vector<std::string> exclude;
  std::string audit;
  bool allow_unknown = false;
  std::optional<std::string> cuda_visible_devices;
  bool json = false;
  std::string format = "text";
  std::string output;
  int master_port = 29500;  ///< for --format torchrun
};

// The plan as --format asks.
Result<std::string> FormatPlan(const Plan& plan, const Topology* topology, const std::string& format, int master_port) {
  if (format == "json") return FormatPlanJson(plan);
  if (format == "hostfile") return FormatPlanHostfile(plan);
  if (format == "slurm-hostfile") return FormatPlanSlurmHostfile(plan);
  if (format == "torchrun") return FormatPlanTorchrunLines(plan, master_port);
  if (format == "rankfile") return FormatPlanRankfile(plan);
  return FormatPlanText(plan, topology);
}

Result<PlanRequest> BuildRequest(const PlanFlags& flags, const Topology* topology) {
  PlanRequest request;
  Result<run::HostPool> pool = run::ReadHostPool(flags.hostfile, flags.hosts);
  if (!pool.ok()) return pool.take_error();
  request.hosts = std::move(pool->hosts);
  std::optional<int> slots = pool->slots;
  if (request.hosts.empty() && !topology)
    return Error(ErrorCode::kBadUsage, "plan", "no hosts: give --topology, --hosts or --hostfile (or run inside a Slurm allocation)");
  if (flags.nnodes > 0) request.nnodes = flags.nnodes;
  if (flags.nproc_per_node > 0) request.nproc_per_node = flags.nproc_per_node;
  else if (Status agree = run::CheckSlotsAgree(*pool, flags.hostfile); !agree.ok()) return agree.take_error();
  else if (slots) request.nproc_per_node = slots;
  for (const std::string& expr : flags.exclude) {
    Result<std::vector<std::string>> excluded = ExpandHostList(expr);
    if (!excluded.ok()) return excluded.take_error();
    request.exclude.insert(request.exclude.end(), excluded->begin(), excluded->end());
  }
  if (!flags.audit.empty()) {
    Result<std::string> text = ReadTextFile(flags.audit);
    if (!text.ok()) return text.take_error();
    auto unhealthy = ReadUnhealthyHosts(*text, flags.audit, topology);
    if (!unhealthy.ok()) return unhealthy.take_error();
    request.unhealthy = std::move(*unhealthy);
  }
  if (flags.cuda_visible_devices) {
    Result<std::vector<int>> visible = ParseCudaVisibleDevices(*flags.cuda_visible_devices);
    if (!visible.ok()) return visible.take_error();
    request.cuda_visible_devices = std::move(*visible);
  }
  request.allow_unknown = flags.allow_unknown;
  return request;
}

int RunPlan(const PlanFlags& flags) {
  std::optional<Topology> topology;
  if (!flags.topology.empty()) {
    Result<std::string> text = ReadTextFile(flags.topology);
    if (!text.ok()) return ReportError(text.error());
    Result<Topology> parsed = ParseTopologyJson(*text, flags.topology);
    if (!parsed.ok()) return ReportError(parsed.error());
    topology = std::move(*parsed);
  }
  const Topology* t = topology ? &*topology : nullptr;
  Result<PlanRequest> request = BuildRequest(flags, t);
  if (!request.ok()) return ReportError(request.error());
  Result<Plan> plan = ComputePlan(t, *request);
  if (!plan.ok()) return ReportError(plan.error());
  std::string format = flags.json ? "json" : flags.format;
  if (format != "text" || !flags.output.empty()) {
    for (const SkippedHost& s : plan->skipped) Note(fmt::format("skipped {}: {}", s.host, s.reason));
    for (const std::string& note : plan->notes) Note(note);
  }
  Result<std::string> text = FormatPlan(*plan, t, format, flags.master_port);
  if (!text.ok()) return ReportError(text.error());
  if (format == "text" && t)
    *text += fmt::format("draw it: the same plan with --json -o plan.json, then: topolaunch show --topology {} --plan plan.json -o plan.html\n",
                         ShellWord(flags.topology));
  return WriteOutput(flags.output, *text);
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand("plan", "Choose nodes and the rank order; bind each local rank to GPU, NUMA, CPUs, NIC");
  cmd->footer(R"(Hosts come from --hosts or --hostfile, else SLURM_JOB_NODELIST inside an allocation,
else every host of the topology. Hosts under one leaf switch get consecutive node
ranks (NCCL builds its rings in node-rank order), so ring traffic leaves each leaf
as few times as possible.

Examples:
  topolaunch plan --topology topology.json --hosts 'node[01-32]'
  topolaunch plan --topology topology.json --nnodes 16 --exclude node07 --audit audit.json
  topolaunch plan --topology topology.json --hostfile hosts.txt --json -o plan.json
  topolaunch plan --topology topology.json --nproc-per-node 8 --format hostfile -o hosts   # deepspeed --hostfile hosts
  topolaunch plan --topology topology.json --nproc-per-node 8 --format slurm-hostfile -o ranks
  SLURM_HOSTFILE=ranks srun --distribution=arbitrary -n 128 python train.py  # 128 = lines of ranks
  topolaunch plan --topology topology.json --nproc-per-node 8 --format rankfile -o ranks
  mpirun --rankfile ranks --mca rmaps_rank_file_physical 1 -np 128 ./app  # each rank on its plan's cores
  topolaunch plan --topology topology.json --hosts 'node[1-4]' --format torchrun |
    while IFS=$'\t' read -r host cmd; do ssh -n "$host" "$cmd train.py" & done; wait
  srun ... topolaunch plan --topology topology.json --nproc-per-node 8   # uses SLURM_JOB_NODELIST)");
  cmd->add_option("--topology", flags->topology, "topology.json from 'topolaunch discover' (without it: given order, no binding)");
  auto* hosts = cmd->add_option("--hosts", flags->hosts, "host list, Slurm syntax ('node[01-16]')");
  auto* hostfile = cmd->add_option("--hostfile", flags->hostfile, "host file: 'host slots=N' per line, '#' comments");
  hosts->excludes(hostfile);
  cmd->add_option("--nnodes", flags->nnodes, "choose this many hosts from the pool (fewest leaves, then fewest spine groups)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--nproc-per-node", flags->nproc_per_node, "ranks per node (default: hostfile slots, else GPUs per host when all agree)")->check(CLI::Range(1, 4096));
  cmd->add_option("--exclude", flags->exclude, "hosts never to plan (Slurm syntax; repeatable)");
  cmd->add_option("--audit", flags->audit, "audit report (topolaunch audit --json): hosts with error/critical findings are skipped");
  cmd->add_flag("--allow-unknown", flags->allow_unknown, "place hosts the fabric does not know last instead of failing");
  cmd->add_option("--cuda-visible-devices", flags->cuda_visible_devices, "GPU indexes (PCI bus order) the ranks may use, e.g. 0,1,2,3");
  cmd->add_flag("--json", flags->json, "print the plan as JSON (schema topolaunch.plan/1); same as --format json");
  cmd->add_option("--format", flags->format,
                  "text, json, hostfile ('HOST slots=N' for deepspeed/mpirun --hostfile), slurm-hostfile "
                  "(a line per rank for SLURM_HOSTFILE + srun --distribution=arbitrary), rankfile (Open MPI: 'rank R=HOST "
                  "slot=CPUS', for mpirun --rankfile FILE --mca rmaps_rank_file_physical 1) or torchrun ('HOST<tab>torchrun "
                  "...' per node: its static-rendezvous command line, the script to append)")
      ->check(CLI::IsMember({"text", "json", "hostfile", "slurm-hostfile", "rankfile", "torchrun"}));
  cmd->add_option("--master-port", flags->master_port, "rendezvous port in --format torchrun's lines")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "write to FILE atomically instead of stdout");
  cmd->callback([flags, &exit_status] { exit_status = RunPlan(*flags); });
}

}  // namespace topolaunch::cli
