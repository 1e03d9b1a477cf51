#include "cli/run_job.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cli_output.h"
#include "cli/host_pool.h"
#include "cli/run_output.h"
#include "cli/ssh_setup.h"
#include "core/atomic_file.h"
#include "core/hostlist.h"
#include "core/text_io.h"
#include "discover/discover_pipeline.h"
#include "discover/local_host.h"
#include "env/compute_ports.h"
#include "env/env_builder.h"
#include "env/env_templates.h"
#include "env/socket_stripes.h"
#include "launch/attempt_outcome.h"
#include "launch/job_env.h"
#include "launch/job_spec.h"
#include "launch/launcher_choice.h"
#include "launch/local_executor.h"
#include "launch/program_search.h"
#include "launch/queued_printer.h"
#include "launch/restart_loop.h"
#include "launch/run_report.h"
#include "launch/run_session.h"
#include "launch/srun_executor.h"
#include "launch/ssh_executor.h"
#include "rankmap/plan_builder.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::cli {

namespace {

using std::chrono::milliseconds;

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnStopSignal(int) { g_stop = true; }

// Ctrl-C, SIGTERM (scancel, a prolog timeout) and SIGHUP (the login
// session closing) all mean "stop every node", handled by the session.
void CatchStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

milliseconds Millis(double seconds) { return milliseconds(static_cast<int64_t>(seconds * 1000)); }

int64_t NowUnixMs() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string DefaultTemplatesDir() {
  std::error_code ec;
  return std::filesystem::is_directory(TOPOLAUNCH_TEMPLATES_DIR, ec) ? TOPOLAUNCH_TEMPLATES_DIR : "";
}

// The fabric decides the order: a topology.json, else a live walk when this
// machine has an HCA. Layouts come from the nodes' preflight.
Result<Topology> LoadRunTopology(const RunFlags& flags) {
  if (!flags.topology.empty()) {
    Result<std::string> text = ReadTextFile(flags.topology);
    if (!text.ok()) return text.take_error();
    return ParseTopologyJson(*text, flags.topology);
  }
  DiscoverOptions options;
  options.local_layout = false;
  options.generated = {VersionString(), NowRfc3339(), ""};
  options.note = [](std::string_view) {};  // discover's advice does not fit here; the plan says what it found
  options.live.past_deadline = ExitAfterTimeout;  // before any node was touched
  return RunDiscovery(options);
}

Result<EnvList> ForwardedEnv(const RunFlags& flags) {
  EnvList from_file;
  if (!flags.env_file.empty()) {
    Result<std::string> text = ReadTextFile(flags.env_file);
    if (!text.ok()) return text.take_error();
    Result<EnvList> parsed = ParseEnvFile(*text, flags.env_file);
    if (!parsed.ok()) return parsed.take_error();
    from_file = std::move(parsed).value();
  }
  Result<EnvList> given = ParseEnvOptions(flags.env, [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
  if (!given.ok()) return given.take_error();
  return MergeEnv(from_file, *given);
}

// Every planned host is in the topology, with the layout its node reported.
void AttachNodeLayouts(Topology& topology, const std::vector<SessionNode>& nodes, const std::vector<NodePreflight>& preflight) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::optional<PreflightReply>& reply = preflight[i].reply;
    TopologyHost* host = topology.FindHost(nodes[i].host);
    if (reply && reply->layout && (!host || !host->layout)) AttachLayout(topology, nodes[i].host, *reply->layout);
    else if (!host) {
      TopologyHost unknown;
      unknown.name = nodes[i].host;
      topology.hosts.push_back(std::move(unknown));
    }
  }
}

// The NCCL settings the env rules derive for one node from its own facts,
// then PYTHONUNBUFFERED (lines arrive as printed, and a failing rank's last
// lines are not lost in a buffer), then what the user forwards, which wins.
Result<EnvList> NodeEnv(const RunFlags& flags, const Topology& topology, const std::string& host, const PreflightReply& reply,
                        const std::string& master_addr, const EnvList& forwarded, std::vector<std::string> stripe,
                        int restart) {
  EnvFacts facts;
  facts.topology = &topology;
  facts.host = host;
  facts.rdma_ports = reply.rdma_ports;
  facts.rank0_host = master_addr;
  facts.socket_route = reply.socket_route;
  facts.socket_route_problem = reply.socket_route_problem;
  facts.socket_interfaces = reply.socket_interfaces;
  facts.stripe_interfaces = std::move(stripe);
  FabricKind kind = flags.profile == "auto" ? DetectFabricKind(facts) : *ParseFabricKind(flags.profile);
  Result<std::vector<TemplateLine>> templates =
      LoadEnvTemplates(flags.templates.empty() ? DefaultTemplatesDir() : flags.templates, kind);
  if (!templates.ok()) return templates.take_error();
  std::map<std::string, std::string> user(forwarded.begin(), forwarded.end());
  Result<EnvOutcome> outcome = ComputeEnv(facts, {kind, std::move(templates).value(), user, false});
  if (!outcome.ok()) return outcome.take_error();
  EnvList env;
  for (const EnvVariable& v : outcome->variables)
    if (v.source != EnvSource::kUser) env.emplace_back(v.name, v.value);
  env = MergeEnv(env, {{"PYTHONUNBUFFERED", "1"}});
  env = MergeEnv(env, forwarded);
  // With --max-restarts the workers learn which attempt they are in (torchrun
  // sets TORCHELASTIC_RESTART_COUNT=0 under static rendezvous, whatever we do).
  if (flags.max_restarts > 0) env = MergeEnv(env, {{"TOPOLAUNCH_RESTART_COUNT", std::to_string(restart)}});
  return env;
}

struct Job {
  bool local = false;
  LauncherChoice launcher;
  std::string srun;                     ///< srun's path, for the srun launcher
  std::string slurm_job_id;
  std::string allocation_list;          ///< SLURM_JOB_NODELIST
  std::vector<std::string> allocation;  ///< its hosts
  std::vector<std::string> hosts;
  Topology topology;
  PlanRequest request;
  JobSpec spec;
  EnvList forwarded;
  bool ranks_from_gpus = false;  ///< no --nproc-per-node nor slots: one rank per GPU the nodes report
  int restart = 0;               ///< which attempt this is (0: the first)
};

Result<Job> PrepareJob(const RunFlags& flags, const std::vector<std::string>& script_and_args) {
  Job job;
  if (script_and_args.empty()) return Error(ErrorCode::kBadUsage, "run", "no SCRIPT given (topolaunch run [OPTIONS] SCRIPT [ARGS...])");
  Result<std::vector<std::string>> torchrun = SplitCommandWords(flags.torchrun, "--torchrun");
  if (!torchrun.ok()) return torchrun.take_error();
  Result<HostPool> pool = ReadHostPool(flags.hostfile, flags.hosts);
  if (!pool.ok()) return pool.take_error();
  job.srun = FindProgram("srun");
  Result<LauncherChoice> launcher = ChooseLauncher({flags.launcher, pool->slurm_job_id, job.srun, pool->source});
  if (!launcher.ok()) return launcher.take_error();
  job.launcher = std::move(launcher).value();
  job.local = job.launcher.kind == LauncherKind::kLocal;
  job.slurm_job_id = pool->slurm_job_id;
  job.allocation_list = pool->allocation_list;
  job.allocation = pool->allocation;
  job.hosts = job.local ? std::vector<std::string>{LocalShortHostName()} : pool->hosts;
  std::vector<Problem> bad_hosts;
  if (!job.local)
    for (const std::string& host : job.hosts)
      if (Status ok = CheckRemoteHost(host); !ok.ok())
        for (Problem& p : ok.take_error().problems) bad_hosts.push_back(std::move(p));
  if (!bad_hosts.empty()) return Error(ErrorCode::kBadInput, std::move(bad_hosts));
  size_t job_nodes = flags.nnodes > 0 ? static_cast<size_t>(flags.nnodes) : job.hosts.size();
  if (flags.min_nnodes > 0 && static_cast<size_t>(flags.min_nnodes) > job_nodes)
    return Error(ErrorCode::kBadUsage, "--min-nnodes",
                 fmt::format("{} is more than the job's {} node(s){}: it could never go on with fewer", flags.min_nnodes,
                             job_nodes, flags.nnodes > 0 ? " (--nnodes)" : ""));
  Result<EnvList> forwarded = ForwardedEnv(flags);
  if (!forwarded.ok()) return forwarded.take_error();
  job.forwarded = std::move(forwarded).value();
  Result<Topology> topology = LoadRunTopology(flags);
  if (!topology.ok()) return topology.take_error();
  job.topology = std::move(topology).value();
  job.request.hosts = job.hosts;
  if (flags.nnodes > 0) job.request.nnodes = flags.nnodes;
  // Without --nproc-per-node: the hostfile's common slots, else 1 with
  // --no-gpus, else one per GPU, known after the preflight (the order does
  // not depend on it).
  job.request.nproc_per_node = flags.nproc_per_node > 0 ? flags.nproc_per_node : pool->slots.value_or(1);
  job.ranks_from_gpus = flags.nproc_per_node == 0 && !pool->slots && !flags.no_gpus;
  job.request.allow_unknown = flags.allow_unknown || job.topology.switches.empty();

  std::error_code ec;
  job.spec.torchrun = std::move(torchrun).value();
  job.spec.python = flags.python;
  job.spec.topolaunch = !flags.remote_topolaunch.empty() ? flags.remote_topolaunch
                                                         : std::filesystem::read_symlink("/proc/self/exe", ec).string();
  job.spec.script = script_and_args.front();
  job.spec.script_args.assign(script_and_args.begin() + 1, script_and_args.end());
  job.spec.master_addr = !flags.master_addr.empty() ? flags.master_addr : job.local ? "127.0.0.1" : "";
  job.spec.master_port = flags.master_port;
  // Like DeepSpeed's launcher: the nodes work in this folder (a shared file
  // system), so relative script paths mean the same everywhere; `~` is the
  // login folder on each node.
  job.spec.cwd = flags.cwd == "~" ? "" : !flags.cwd.empty() ? flags.cwd : std::filesystem::current_path(ec).string();
  job.spec.grace = Millis(flags.grace_s);
  job.spec.heartbeat = Millis(flags.heartbeat_s);
  return job;
}

// Under srun each agent has the preflight's time to connect back.
std::unique_ptr<Executor> MakeExecutor(const Job& job, const std::optional<SshOptions>& ssh, milliseconds connect_timeout) {
  if (ssh) return std::make_unique<SshExecutor>(*ssh);
  if (job.launcher.kind == LauncherKind::kSrun)
    return std::make_unique<SrunExecutor>(job.srun, std::make_unique<LocalExecutor>(), connect_timeout);
  return std::make_unique<LocalExecutor>();
}

// With --nnodes: the pool's hosts the plan did not choose (they stay idle,
// or wait as spares), then the ones it skipped, with why.
std::vector<std::string> IdleHostNotes(const RunFlags& flags, const Job& job, const Plan& order) {
  std::vector<std::string> notes;
  if (!job.request.nnodes) return notes;
  std::set<std::string> used;
  for (const PlanNode& node : order.nodes) used.insert(node.host);
  for (const SkippedHost& s : order.skipped) used.insert(s.host);
  std::vector<std::string> idle;
  for (const std::string& host : job.hosts)
    if (!used.contains(host)) idle.push_back(host);
  if (!idle.empty())
    notes.push_back(fmt::format("--nnodes {}: {} host(s) of the pool stay idle{}: {}", *job.request.nnodes, idle.size(),
                                flags.max_restarts > 0 ? fmt::format(", spares for --max-restarts {}", flags.max_restarts) : "",
                                HostListForMessages(idle)));
  for (const SkippedHost& s : order.skipped) notes.push_back(fmt::format("skipped {}: {}", s.host, s.reason));
  return notes;
}

// srun starts steps only on the allocation's nodes; a planned host outside
// it is named before anything starts (Slurm's own refusal, "Requested node
// configuration is not available", does not say which).
std::vector<std::string> HostsOutsideAllocation(const Job& job, const std::vector<SessionNode>& nodes) {
  std::vector<std::string> outside;
  if (job.launcher.kind != LauncherKind::kSrun || job.allocation.empty()) return outside;
  std::set<std::string> allocated(job.allocation.begin(), job.allocation.end());
  for (const SessionNode& node : nodes)
    if (!allocated.contains(node.host)) outside.push_back(node.host);
  return outside;
}

// The master address when none is given: the name the first node is
// reached at, as ~/.ssh/config resolves its alias (HostName), else the
// host name itself. The preflight checks that every node resolves it.
std::string DefaultMasterAddress(const std::optional<SshOptions>& ssh, const std::string& first_host) {
  if (!ssh) return first_host;
  SshHostSettings settings = ResolveSshHost(ssh->config, first_host, ssh->home, ssh->local_user);
  return settings.host_name && !settings.host_name->empty() ? *settings.host_name : first_host;
}

// A node that was not asked for its layout counts the GPUs of the
// topology.json's.
void FillKnownGpuCounts(const Job& job, const std::vector<SessionNode>& nodes, std::vector<NodePreflight>& preflight) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const TopologyHost* known = job.topology.FindHost(nodes[i].host);
    if (PreflightReply* reply = preflight[i].reply ? &*preflight[i].reply : nullptr; reply && !reply->layout && known && known->layout)
      reply->gpus = static_cast<int>(known->layout->gpus.size());
  }
}

// One rank per GPU when every node answered; else nullopt (the nodes that
// did not are named by JudgeNodes).
std::optional<Result<int>> RanksPerNodeFromReplies(const std::vector<SessionNode>& nodes,
                                                   const std::vector<NodePreflight>& preflight) {
  std::vector<std::string> hosts;
  std::vector<int> gpus;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!preflight[i].failure.empty() || !preflight[i].reply) return std::nullopt;
    hosts.push_back(nodes[i].host);
    gpus.push_back(preflight[i].reply->gpus);
  }
  return RanksPerNodeFromGpus(hosts, gpus);
}

// "python: the one torchrun runs under (its #! line): /usr/bin/python3
// (node[1-4]); ...", one part per interpreter when the nodes differ.
std::string InterpreterNote(const std::vector<SessionNode>& nodes, const std::vector<NodePreflight>& preflight) {
  std::map<std::string, std::vector<std::string>> by_path;
  for (size_t i = 0; i < nodes.size(); ++i) by_path[preflight[i].reply->interpreter].push_back(nodes[i].host);
  std::vector<std::string> parts;
  for (auto& [path, hosts] : by_path) parts.push_back(fmt::format("{} ({})", path, HostListForMessages(hosts)));
  return fmt::format("python: the one torchrun runs under (its #! line): {}; --python chooses another",
                     fmt::join(parts, ", "));
}

// Every node's problems (start failures, then the preflight's judgement).
std::vector<std::vector<std::string>> JudgeNodes(const RunFlags& flags, const Job& job, const std::vector<SessionNode>& nodes,
                                                 std::vector<NodePreflight>& preflight, const std::string& master_addr,
                                                 size_t& bad) {
  PreflightExpectations expect;
  expect.nproc_per_node = job.request.nproc_per_node.value_or(1);
  expect.require_gpus = !flags.no_gpus;
  expect.master_host = nodes.front().host;
  expect.master_port = job.spec.master_port;
  expect.master_addr = master_addr;
  expect.want_interpreter = job.spec.python.empty();
  expect.audit = flags.audit;
  std::vector<std::vector<std::string>> problems(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!preflight[i].failure.empty()) problems[i].push_back(preflight[i].failure);
    else
      problems[i] =
          JudgePreflight(nodes[i].host, *preflight[i].reply, {preflight[i].sent_ms, preflight[i].received_ms}, expect);
  }
  std::vector<std::string> hosts;
  std::vector<const PreflightReply*> replies;
  for (size_t i = 0; i < nodes.size(); ++i) {
    hosts.push_back(nodes[i].host);
    replies.push_back(preflight[i].reply ? &*preflight[i].reply : nullptr);
  }
  std::vector<std::string> same = SameMachineProblems(hosts, replies);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!same[i].empty()) problems[i].push_back(same[i]);
    bad += problems[i].empty() ? 0 : 1;
  }
  return problems;
}

// The plan again, now with each node's own layout for its bindings. The
// order was fixed by the fabric before the preflight; only NVLink domains
// that the nodes' own layouts show (and the topology did not) can move it,
// and RunJob then plans again (ReorderedByDomains).
Result<Plan> PlanWithNodeLayouts(Job& job, const std::vector<SessionNode>& nodes, const std::vector<NodePreflight>& preflight) {
  AttachNodeLayouts(job.topology, nodes, preflight);
  return ComputePlan(&job.topology, job.request);
}

bool ReorderedByDomains(const Plan& plan, const std::vector<SessionNode>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (plan.nodes[i].host != nodes[i].host) return true;
  return false;
}

// "nvl0: node[01-18], nvl1: node[19-36]", in plan order.
std::string DomainsOfPlan(const Plan& plan) {
  std::vector<std::pair<std::string, std::vector<std::string>>> domains;
  for (const PlanNode& n : plan.nodes) {
    if (n.nvlink_domain.empty()) continue;
    if (domains.empty() || domains.back().first != n.nvlink_domain) domains.push_back({n.nvlink_domain, {}});
    domains.back().second.push_back(n.host);
  }
  std::string out;
  for (const auto& [name, hosts] : domains) out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", name, HostListForMessages(hosts));
  return out;
}

// Each node's launch message: its torchrun command and its environment.
Result<std::vector<LaunchMessage>> BuildLaunches(const RunFlags& flags, const Job& job, const Plan& plan,
                                                 const std::vector<NodePreflight>& preflight, const std::string& master_addr) {
  // On TCP every node stripes over the interfaces on subnets all of them have.
  std::vector<std::vector<SocketInterface>> interfaces;
  for (const NodePreflight& node : preflight) interfaces.push_back(node.reply->socket_interfaces);
  std::set<Ipv4Subnet> shared = SharedSubnets(interfaces);
  std::vector<LaunchMessage> messages;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const PreflightReply& reply = *preflight[i].reply;
    std::vector<std::string> stripe =
        reply.socket_route ? StripeInterfaces(reply.socket_interfaces, shared, reply.socket_route->interface) : std::vector<std::string>{};
    Result<EnvList> env =
        NodeEnv(flags, job.topology, plan.nodes[i].host, reply, master_addr, job.forwarded, std::move(stripe), job.restart);
    if (!env.ok()) return env.take_error();
    JobSpec spec = job.spec;
    if (spec.python.empty()) spec.python = preflight[i].reply->interpreter;  // torchrun's own, on this node
    messages.push_back(NodeLaunchMessage(spec, plan, plan.nodes[i], std::move(env).value()));
  }
  return messages;
}

// The terminal, and with --log-dir the files, as RunOutput::printer().
struct RunOutput {
  std::unique_ptr<PrefixPrinter> terminal;
  std::unique_ptr<LogDirPrinter> files;
  std::unique_ptr<TeePrinter> both;
  std::optional<RankSet> ranks_output;  ///< --ranks-output, parsed
  QueuedLinePrinter* queued = nullptr;  ///< what the session prints through, once made
  LinePrinter& printer() {
    if (both) return *both;
    return *terminal;
  }
};

Result<RunOutput> OpenRunOutput(const RunFlags& flags, const std::vector<SessionNode>& nodes) {
  RunOutput output;
  if (!flags.ranks_output.empty()) {
    Result<RankSet> ranks = RankSet::Parse(flags.ranks_output, "--ranks-output");
    if (!ranks.ok()) return ranks.take_error();
    output.ranks_output = std::move(ranks).value();
  }
  TerminalChoice choice;
  choice.ranks = output.ranks_output;
  choice.node_lines = flags.log_dir.empty();
  choice.rank_lines = flags.log_dir.empty() || choice.ranks;
  output.terminal = std::make_unique<PrefixPrinter>(nodes, std::move(choice), stdout, stderr, isatty(STDERR_FILENO) == 1);
  if (flags.log_dir.empty()) return output;
  Result<std::unique_ptr<LogDirPrinter>> files = LogDirPrinter::Open(flags.log_dir, nodes);
  if (!files.ok()) return files.take_error();
  output.files = std::move(files).value();
  output.both = std::make_unique<TeePrinter>(std::vector<LinePrinter*>{output.files.get(), output.terminal.get()});
  return output;
}

// A --ranks-output rank must be in the job.
Status CheckRanksOutput(const std::optional<RankSet>& ranks, const Plan& plan) {
  if (!ranks || ranks->Highest() < plan.world_size) return Ok{};
  return Error(ErrorCode::kBadUsage, "--ranks-output",
               fmt::format("rank {} is not in the job (ranks 0-{})", ranks->Highest(), plan.world_size - 1));
}

// While the preflight waits: "preflight: 812 of 1000 node(s) answered;
// waiting on node[0012,0044] (15 s)", drawn in place on a terminal every
// second, else printed every 10 s; nothing for the first 2 s.
std::function<void(const std::vector<size_t>&, milliseconds)> PreflightProgress(const std::vector<SessionNode>& nodes,
                                                                              RunOutput& output) {
  bool in_place = isatty(STDERR_FILENO) == 1;
  return [&nodes, &output, in_place](const std::vector<size_t>& waiting, milliseconds waited) {
    int64_t seconds = waited.count() / 1000;
    if (!output.queued || seconds < 2 || (!in_place && seconds % 10 != 0)) return;
    constexpr size_t kNamed = 8;
    std::vector<std::string> hosts;
    for (size_t i = 0; i < waiting.size() && i < kNamed; ++i) hosts.push_back(nodes[waiting[i]].host);
    std::string more = waiting.size() > kNamed ? fmt::format(" and {} more", waiting.size() - kNamed) : "";
    output.queued->Status(fmt::format("preflight: {} of {} node(s) answered; waiting on {}{} ({} s)",
                                      nodes.size() - waiting.size(), nodes.size(), HostListForMessages(hosts), more, seconds));
  };
}

// One pass of the job (launch/restart_loop.h): plan, preflight, run once.
PassResult RunJobPass(const RunFlags& flags, const std::vector<std::string>& script_and_args, const PassRequest& request) {
  auto pass_started = std::chrono::steady_clock::now();
  auto done = [](int status) {
    PassResult r;
    r.status = status;
    return r;
  };
  // An attempt the loop may follow with another: its nodes, the pool the
  // spares come from, the topology to choose them by, how long it took.
  auto attempt = [&](PassResult r, Job& job, const std::vector<SessionNode>& nodes) {
    for (const SessionNode& node : nodes) r.order.push_back(node.host);
    r.pool = job.hosts;
    r.allow_unknown = job.request.allow_unknown;
    r.topology = std::make_shared<const Topology>(std::move(job.topology));
    r.lasted = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - pass_started);
    return r;
  };
  Result<Job> prepared = PrepareJob(flags, script_and_args);
  if (!prepared.ok()) return done(ReportError(prepared.error()));
  Job& job = *prepared;
  if (const Replan* replan = request.replan)
    for (const TopologyHost& learned : replan->learned.hosts) {
      const TopologyHost* known = job.topology.FindHost(learned.name);
      if (learned.layout && (!known || !known->layout)) AttachLayout(job.topology, learned.name, *learned.layout);
    }
  if (request.hosts) {
    job.request.hosts = *request.hosts;
    job.request.nnodes.reset();  // chosen by the first pass, whose notes said which stay idle
  }
  job.restart = request.restart;
  Result<Plan> order = ComputePlan(&job.topology, job.request);
  if (!order.ok()) return done(ReportError(order.error()));

  std::vector<SessionNode> nodes;
  for (const PlanNode& node : order->nodes) nodes.push_back({node.host, node.node_rank});
  if (request.restart == 0 && !request.hosts) {
    Note("launcher: " + job.launcher.why);
    for (const std::string& note : IdleHostNotes(flags, job, *order)) Note(note);
  }
  if (std::vector<std::string> outside = HostsOutsideAllocation(job, nodes); !outside.empty()) {
    PrintTo(stderr, fmt::format("topolaunch: error: preflight: {} of {} node(s) not in Slurm job {}'s allocation ({}): {}; "
                                "srun starts steps only there, so nothing was started (--launcher ssh reaches other hosts)\n",
                                outside.size(), nodes.size(), job.slurm_job_id, job.allocation_list, HostListForMessages(outside)));
    return done(3);
  }
  std::optional<SshOptions> ssh;
  if (job.launcher.kind == LauncherKind::kSsh) {
    Result<SshOptions> read =
        ReadSshSetup({flags.accept_new_host_keys, Millis(flags.connect_timeout_s), flags.ssh_config, flags.known_hosts});
    if (!read.ok()) return done(ReportError(read.error()));
    ssh = std::move(read).value();
    // The login side notices a cut node as the node notices the login side:
    // three heartbeat intervals without an answer (SSH keepalives, TCP user
    // timeout), and the node counts as lost.
    if (flags.heartbeat_s > 0) ssh->keepalive_interval_s = static_cast<int>(std::ceil(flags.heartbeat_s));
  }
  if (job.spec.master_addr.empty() && !nodes.empty()) job.spec.master_addr = DefaultMasterAddress(ssh, nodes.front().host);
  std::string master_addr = MasterAddress(job.spec, *order);
  bool want_layout = false;
  for (const SessionNode& node : nodes) {
    const TopologyHost* host = job.topology.FindHost(node.host);
    want_layout = want_layout || !host || !host->layout;
  }
  SessionOptions options;
  options.agent = Command{{job.spec.topolaunch, "agent"}};
  options.preflight.programs = {job.spec.torchrun.front(), "numactl"};
  if (!job.spec.python.empty()) options.preflight.programs.insert(options.preflight.programs.begin() + 1, job.spec.python);
  else options.preflight.interpreter_of = job.spec.torchrun.front();
  options.preflight.master_port = job.spec.master_port;
  options.preflight.master_addr = master_addr;
  options.preflight.want_layout = want_layout;
  options.preflight.cwd = job.spec.cwd;
  options.preflight.audit = flags.audit;
  options.preflight.sysfs_root = flags.audit_sysfs_root;
  if (!job.spec.script.starts_with('-')) options.preflight.files = {job.spec.script};  // not `-m module`
  options.preflight_timeout = Millis(flags.preflight_timeout_s);
  options.stop_grace = job.spec.grace + milliseconds(2000);
  options.tail_lines = 60;
  options.heartbeat = job.spec.heartbeat;
  options.now_ms = NowUnixMs;

  std::unique_ptr<Executor> executor = MakeExecutor(job, ssh, options.preflight_timeout);
  Result<RunOutput> output = OpenRunOutput(flags, nodes);
  if (!output.ok()) return done(ReportError(output.error()));
  if (!flags.log_dir.empty())
    Note(fmt::format("each rank's output goes to {0}/RANK.log, each node's own to {0}/HOST.log", flags.log_dir));
  options.preflight_progress = PreflightProgress(nodes, *output);

  CatchStopSignals();
  // Lines go through a bounded queue: a stalled terminal drops lines, never
  // heartbeats (the executors' threads carry both).
  QueuedLinePrinter queued(output->printer(), [](std::string_view text) { Note(text); });
  output->queued = &queued;
  RunSession session(*executor, nodes, options, queued);
  Note(fmt::format("preflight on {} node(s)", nodes.size()));
  std::vector<NodePreflight> preflight = session.Preflight(g_stop);
  queued.Status("");
  if (g_stop) {
    session.Abort();
    Note("interrupted during preflight: nothing was started");
    return done(130);
  }
  FillKnownGpuCounts(job, nodes, preflight);
  if (job.ranks_from_gpus && request.ranks_per_node) {  // a restart: as many ranks as the first attempt
    job.request.nproc_per_node = *request.ranks_per_node;
    job.ranks_from_gpus = false;
  }
  if (job.ranks_from_gpus) {
    if (std::optional<Result<int>> ranks = RanksPerNodeFromReplies(nodes, preflight)) {
      if (!ranks->ok()) {
        session.Abort();
        queued.Finish();
        return done(ReportError(ranks->error()));
      }
      job.request.nproc_per_node = **ranks;
      Note(fmt::format("--nproc-per-node {}: one rank per GPU, as every node reports", **ranks));
    }
  }
  size_t bad = 0;
  std::vector<std::vector<std::string>> problems = JudgeNodes(flags, job, nodes, preflight, master_addr, bad);
  if (bad) {
    session.Abort();
    queued.Finish();
    PassResult r = done(3);
    // A node lost since, or a spare that is not ready: replaced in turn. When
    // every node of several fails, the cause is the job's (its script gone,
    // the login side's clock), not theirs: nobody is dropped, the job failed.
    bool nodes_fault = nodes.size() == 1 || bad < nodes.size();
    if (request.restart > 0 && nodes_fault) {
      Note(fmt::format("preflight of restart {}: {} of {} node(s) not ready, dropped:\n{}", request.restart, bad,
                       nodes.size(), FormatPreflightProblems(nodes, problems)));
      for (size_t i = 0; i < nodes.size(); ++i)
        if (!problems[i].empty()) r.lost.push_back(nodes[i].host);
      r.outcome = fmt::format("preflight: not ready: {}", HostListForMessages(r.lost));
      return attempt(std::move(r), job, nodes);
    }
    PrintTo(stderr, fmt::format("topolaunch: error: preflight{}: {} of {} node(s) not ready; nothing was started{}:\n{}",
                                request.restart > 0 ? fmt::format(" of restart {}", request.restart) : "", bad, nodes.size(),
                                request.restart > 0 ? " (every node: the fault is the job's, no node is dropped)" : "",
                                FormatPreflightProblems(nodes, problems)));
    if (request.restart > 0) r.status = 1;  // the job ran and failed
    return r;
  }
  if (job.spec.python.empty()) Note(InterpreterNote(nodes, preflight));

  Result<Plan> plan = PlanWithNodeLayouts(job, nodes, preflight);
  if (!plan.ok()) {
    session.Abort();
    return done(ReportError(plan.error()));
  }
  if (ReorderedByDomains(*plan, nodes)) {
    session.Abort();
    queued.Finish();
    if (request.replan)
      return done(ReportError(Error(ErrorCode::kInternal, "run", "the node order changed once the layouts were known")));
    Note(fmt::format("the nodes' own layouts put them in NVLink domains ({}): planning again so that each domain's "
                     "ranks are together, then a new preflight (a topology.json with the nodes' layouts gives this "
                     "order at once: discover --layout-dir with each node's HOST.json)",
                     DomainsOfPlan(*plan)));
    PassResult r;
    r.replan = Replan{std::move(job.topology), {}};
    for (const SessionNode& node : nodes) r.replan->hosts.push_back(node.host);
    return r;
  }
  for (const std::string& note : plan->notes) Note(note);
  Result<std::vector<LaunchMessage>> launches = BuildLaunches(flags, job, *plan, preflight, master_addr);
  if (!launches.ok()) {
    session.Abort();
    return done(ReportError(launches.error()));
  }
  const std::vector<LaunchMessage>& messages = *launches;
  if (Status ranks = CheckRanksOutput(output->ranks_output, *plan); !ranks.ok()) {
    session.Abort();
    return done(ReportError(ranks.error()));
  }
  if (flags.dry_run) {
    session.Abort();
    queued.Finish();
    if (!PrintTo(stdout, FormatDryRun(*plan, messages)))
      return done(ReportError(Error(ErrorCode::kUnavailable, "stdout", "write failed")));
    return done(0);
  }
  Note(fmt::format("starting {} rank(s) on {} node(s), master {}:{}", plan->world_size, nodes.size(), master_addr,
                   job.spec.master_port));
  SessionReport report = session.Launch(messages, g_stop);
  auto wall = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - pass_started);
  queued.Finish();  // every line before the summary
  PrintTo(stderr, FormatRunSummary(*plan, report, wall));
  PassResult r = done(report.interrupted ? 130 : report.first_failure ? 1 : 0);
  r.ran = true;
  if (job.ranks_from_gpus) r.ranks_per_node = job.request.nproc_per_node;
  r.outcome = report.interrupted ? "interrupted" : "ok";
  if (!report.interrupted && report.first_failure) {
    AttemptFailure failure = ClassifyFailure(nodes, report);
    for (size_t i : failure.lost) r.lost.push_back(nodes[i].host);
    r.outcome = "failed: " + failure.what;
  }
  return attempt(std::move(r), job, nodes);
}

}  // namespace

int RunJob(const RunFlags& flags, const std::vector<std::string>& script_and_args) {
  RestartOptions options{flags.max_restarts, flags.restart_delay_s, flags.min_nnodes, flags.failed_hosts};
  RestartIo io;
  io.note = [](std::string_view text) { Note(text); };
  io.print = [](std::string_view text) { PrintTo(stderr, text); };
  io.report_error = [](const Error& error) { return ReportError(error); };
  io.wait = [](milliseconds wait) {
    CatchStopSignals();  // Ctrl-C between attempts, too
    auto until = std::chrono::steady_clock::now() + wait;
    while (!g_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(milliseconds(50));
    return !g_stop;
  };
  io.write_file = [](const std::string& path, std::string_view text) { return WriteFileAtomically(path, text); };
  return RunAttempts(options, [&](const PassRequest& request) { return RunJobPass(flags, script_and_args, request); }, io);
}

}  // namespace topolaunch::cli
