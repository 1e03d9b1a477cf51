// Prepare: the job as the options describe it, before any node is touched.
// Everything here can fail on the user's input alone (a script missing from
// the command line, a bad host name, a hostfile line, an --env-file), so it
// runs first and costs no node anything.
#include <arpa/inet.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "core/console.h"
#include "core/text_io.h"
#include "discover/discover_pipeline.h"
#include "discover/local_host.h"
#include "launch/command.h"
#include "launch/job_env.h"
#include "launch/program_search.h"
#include "launch/scontrol_query.h"
#include "launch/srun_step_env.h"
#include "run/host_pool.h"
#include "run/stages.h"
#include "topolaunch/topology_json.h"

extern char** environ;

namespace topolaunch::run {

namespace {

using std::chrono::milliseconds;

milliseconds Millis(double seconds) { return milliseconds(static_cast<int64_t>(seconds * 1000)); }

// The fabric decides the order: a topology.json, else a live walk when this
// machine has an HCA. Layouts come from the nodes' preflight.
Result<Topology> LoadRunTopology(const RunOptions& options, const RunContext& context) {
  if (!options.topology.empty()) {
    Result<std::string> text = ReadTextFile(options.topology);
    if (!text.ok()) return text.take_error();
    return ParseTopologyJson(*text, options.topology);
  }
  DiscoverOptions discover;
  discover.local_layout = false;
  discover.generated = context.generated;
  discover.note = [](std::string_view) {};  // discover's advice does not fit here; the plan says what it found
  discover.live.past_deadline = context.past_deadline;  // before any node was touched
  return RunDiscovery(discover);
}

Result<EnvList> ForwardedEnv(const RunOptions& options) {
  EnvList from_file;
  if (!options.env_file.empty()) {
    Result<std::string> text = ReadTextFile(options.env_file);
    if (!text.ok()) return text.take_error();
    Result<EnvList> parsed = ParseEnvFile(*text, options.env_file);
    if (!parsed.ok()) return parsed.take_error();
    from_file = std::move(parsed).value();
  }
  Result<EnvList> given = ParseEnvOptions(options.env, [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
  if (!given.ok()) return given.take_error();
  return MergeEnv(from_file, *given);
}

bool IsNumericAddress(const std::string& text) {
  in6_addr any;
  return inet_pton(AF_INET, text.c_str(), &any) == 1 || inet_pton(AF_INET6, text.c_str(), &any) == 1;
}

// The pool, the launcher that reaches it, and the hosts the job may use
// (each a host name, never an option in disguise).
Status ChoosePoolAndLauncher(const RunOptions& options, PreparedJob& job, std::optional<int>& slots) {
  Result<HostPool> pool = ReadHostPool(options.hostfile, options.hosts);
  if (!pool.ok()) return pool.take_error();
  job.srun = FindProgram("srun");
  const char* step_tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  Result<LauncherChoice> launcher =
      ChooseLauncher({options.launcher, pool->slurm_job_id, job.srun, pool->source, step_tasks ? std::atoi(step_tasks) : 0});
  if (!launcher.ok()) return launcher.take_error();
  job.launcher = std::move(launcher).value();
  job.local = job.launcher.kind == LauncherKind::kLocal;
  if (job.launcher.kind == LauncherKind::kSrun) {
    std::vector<std::string> environment;
    for (char** e = environ; *e; ++e) environment.emplace_back(*e);
    job.step_dropped = DroppedForTheStep(environment);
    job.step_gpus = StepGpuRequest(environment);
    if (!job.step_gpus) {
      // Not asked per task: what the job holds without having asked
      // (--exclusive gives every GPU of a node, which a step does not get
      // unasked).
      Result<JobGpus> held = QueryHeldGpus(pool->slurm_job_id);
      if (held.ok())
        job.step_gpus = StepGpusFromHeld(*held);
      else
        job.step_gpus_unread = held.error().Message();
    }
  }
  if (!options.connect_back_address.empty()) {
    if (!IsNumericAddress(options.connect_back_address))
      return Error(ErrorCode::kBadInput, "--connect-back-address",
                   fmt::format("'{}' is not a numeric IPv4 or IPv6 address", options.connect_back_address));
    if (job.launcher.kind != LauncherKind::kSrun)
      return Error(ErrorCode::kBadInput, "--connect-back-address",
                   "only the srun launcher's agents connect back; this job is launched without srun");
  }
  job.slurm_job_id = pool->slurm_job_id;
  job.allocation_list = pool->allocation_list;
  job.allocation = pool->allocation;
  job.hosts = job.local ? std::vector<std::string>{LocalShortHostName()} : pool->hosts;
  slots = pool->slots;
  if (options.nproc_per_node == 0)
    if (Status agree = CheckSlotsAgree(*pool, options.hostfile); !agree.ok()) return agree;
  std::vector<Problem> bad_hosts;
  if (!job.local)
    for (const std::string& host : job.hosts)
      if (Status ok = CheckRemoteHost(host); !ok.ok())
        for (Problem& p : ok.take_error().problems) bad_hosts.push_back(std::move(p));
  if (!bad_hosts.empty()) return Error(ErrorCode::kBadInput, std::move(bad_hosts));
  size_t job_nodes = options.nnodes > 0 ? static_cast<size_t>(options.nnodes) : job.hosts.size();
  if (options.min_nnodes > 0 && static_cast<size_t>(options.min_nnodes) > job_nodes)
    return Error(ErrorCode::kBadUsage, "--min-nnodes",
                 fmt::format("{} is more than the job's {} node(s){}: it could never go on with fewer", options.min_nnodes,
                             job_nodes, options.nnodes > 0 ? " (--nnodes)" : ""));
  return Ok{};
}

// What each node runs: torchrun, the interpreter, this program for `bind`,
// the script, the rendezvous, the working folder, the stop timings.
JobSpec SpecOfJob(const RunOptions& options, const PreparedJob& job, std::vector<std::string> torchrun,
                  const std::vector<std::string>& script_and_args) {
  std::error_code ec;
  JobSpec spec;
  spec.torchrun = std::move(torchrun);
  spec.python = options.python;
  spec.topolaunch = !options.remote_topolaunch.empty() ? options.remote_topolaunch
                                                       : std::filesystem::read_symlink("/proc/self/exe", ec).string();
  spec.script = script_and_args.front();
  spec.script_args.assign(script_and_args.begin() + 1, script_and_args.end());
  spec.master_addr = !options.master_addr.empty() ? options.master_addr : job.local ? "127.0.0.1" : "";
  spec.master_port = options.master_port;
  // Like DeepSpeed's launcher: the nodes work in this folder (a shared file
  // system), so relative script paths mean the same everywhere; `~` is the
  // login folder on each node.
  spec.cwd = options.cwd == "~" ? "" : !options.cwd.empty() ? options.cwd : std::filesystem::current_path(ec).string();
  spec.grace = Millis(options.grace_s);
  spec.heartbeat = Millis(options.heartbeat_s);
  return spec;
}

Result<PreparedJob> PrepareJob(const RunOptions& options, const RunContext& context,
                               const std::vector<std::string>& script_and_args) {
  PreparedJob job;
  job.started = std::chrono::steady_clock::now();
  if (script_and_args.empty()) return Error(ErrorCode::kBadUsage, "run", "no SCRIPT given (topolaunch run [OPTIONS] SCRIPT [ARGS...])");
  Result<std::vector<std::string>> torchrun = SplitCommandWords(options.torchrun, "--torchrun");
  if (!torchrun.ok()) return torchrun.take_error();
  std::optional<int> slots;
  if (Status chosen = ChoosePoolAndLauncher(options, job, slots); !chosen.ok()) return chosen.take_error();
  Result<EnvList> forwarded = ForwardedEnv(options);
  if (!forwarded.ok()) return forwarded.take_error();
  job.forwarded = std::move(forwarded).value();
  Result<Topology> topology = LoadRunTopology(options, context);
  if (!topology.ok()) return topology.take_error();
  job.topology = std::move(topology).value();
  job.request.hosts = job.hosts;
  if (options.nnodes > 0) job.request.nnodes = options.nnodes;
  // Without --nproc-per-node: the hostfile's common slots, else 1 with
  // --no-gpus, else one per GPU, known after the preflight (the order does
  // not depend on it).
  job.request.nproc_per_node = options.nproc_per_node > 0 ? options.nproc_per_node : slots.value_or(1);
  job.ranks_from_gpus = options.nproc_per_node == 0 && !slots && !options.no_gpus;
  job.request.allow_unknown = options.allow_unknown || job.topology.switches.empty();
  job.spec = SpecOfJob(options, job, std::move(torchrun).value(), script_and_args);
  return job;
}

}  // namespace

PassResult EndPass(int status) {
  PassResult result;
  result.status = status;
  return result;
}

Staged<PreparedJob> PrepareStage(const RunOptions& options, const RunContext& context,
                                 const std::vector<std::string>& script_and_args) {
  Result<PreparedJob> job = PrepareJob(options, context, script_and_args);
  if (!job.ok()) return EndPass(ReportError(job.error()));
  return std::move(job).value();
}

}  // namespace topolaunch::run
