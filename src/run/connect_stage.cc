// Connect: a way to the nodes, and where their lines will go, before any
// agent starts. The SSH launcher reads the user's ssh settings here (the
// master address follows ~/.ssh/config's HostName for the first node), srun
// gets the preflight's time for its agents to connect back, and the session
// that the preflight and the launch share is made.
#include <unistd.h>

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/console.h"
#include "core/hostlist.h"
#include "launch/local_executor.h"
#include "launch/ssh_config.h"
#include "launch/srun_executor.h"
#include "launch/scontrol_query.h"
#include "launch/ssh_executor.h"
#include "run/ssh_setup.h"
#include "run/stages.h"
#include "run/stop_signals.h"

namespace topolaunch::run {

namespace {

using std::chrono::milliseconds;

milliseconds Millis(double seconds) { return milliseconds(static_cast<int64_t>(seconds * 1000)); }

int64_t NowUnixMs() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<std::optional<SshOptions>> SshOptionsOfJob(const RunOptions& options, const OrderedJob& job) {
  if (job.launcher.kind != LauncherKind::kSsh) return std::optional<SshOptions>();
  Result<SshOptions> ssh = ReadSshSetup(
      {options.accept_new_host_keys, Millis(options.connect_timeout_s), options.ssh_config, options.known_hosts});
  if (!ssh.ok()) return ssh.take_error();
  // The login side notices a cut node as the node notices the login side:
  // three heartbeat intervals without an answer (SSH keepalives, TCP user
  // timeout), and the node counts as lost.
  if (options.heartbeat_s > 0) ssh->keepalive_interval_s = static_cast<int>(std::ceil(options.heartbeat_s));
  return std::optional<SshOptions>(std::move(ssh).value());
}

// The master address when none is given: the name the first node is
// reached at, as ~/.ssh/config resolves its alias (HostName), else the
// host name itself. The preflight checks that every node resolves it.
std::string DefaultMasterAddress(const std::optional<SshOptions>& ssh, const std::string& first_host) {
  if (!ssh) return first_host;
  SshHostSettings settings = ResolveSshHost(ssh->config, first_host, ssh->home, ssh->local_user);
  return settings.host_name && !settings.host_name->empty() ? *settings.host_name : first_host;
}

// Where `run` listens for the agents under srun: the address given, on a
// port of the site's SrunPortRange (its firewalls admit nodes' connections
// to login nodes there) when it sets one.
ListenOn ConnectBackPlace(const RunOptions& options) {
  ListenOn place{options.connect_back_address, std::nullopt};
  Result<std::optional<PortRange>> range = QuerySrunPortRange();
  if (range.ok()) place.ports = *range;
  else Note(fmt::format("cannot read SrunPortRange ({}): the agents connect back to any free port", range.error().Message()));
  return place;
}

// Under srun each agent has the preflight's time to connect back.
std::unique_ptr<Executor> MakeExecutor(const RunOptions& options, const OrderedJob& job, const std::optional<SshOptions>& ssh,
                                       milliseconds connect_timeout) {
  if (ssh) return std::make_unique<SshExecutor>(*ssh);
  if (job.launcher.kind == LauncherKind::kSrun)
    return std::make_unique<SrunExecutor>(job.srun, std::make_unique<LocalExecutor>(), connect_timeout,
                                          ConnectBackPlace(options),
                                          job.step_gpus ? std::vector<std::string>{job.step_gpus->option}
                                                        : std::vector<std::string>{});
  return std::make_unique<LocalExecutor>();
}

// What every agent is asked in the preflight, and how the session runs.
SessionOptions SessionOptionsOfJob(const RunOptions& options, const ConnectedJob& job) {
  bool want_layout = false;
  for (const SessionNode& node : job.nodes) {
    const TopologyHost* host = job.topology.FindHost(node.host);
    want_layout = want_layout || !host || !host->layout;
  }
  SessionOptions session;
  session.agent = Command{{job.spec.topolaunch, "agent"}};
  session.preflight.programs = {job.spec.torchrun.front(), "numactl"};
  if (!job.spec.python.empty()) session.preflight.programs.insert(session.preflight.programs.begin() + 1, job.spec.python);
  else session.preflight.interpreter_of = job.spec.torchrun.front();
  session.preflight.master_port = job.spec.master_port;
  session.preflight.master_addr = job.master_addr;
  session.preflight.want_layout = want_layout;
  session.preflight.cwd = job.spec.cwd;
  session.preflight.audit = options.audit;
  session.preflight.sysfs_root = options.audit_sysfs_root;
  if (!job.spec.script.starts_with('-')) session.preflight.files = {job.spec.script};  // not `-m module`
  session.preflight_timeout = Millis(options.preflight_timeout_s);
  session.stop_grace = job.spec.grace + milliseconds(2000);
  session.tail_lines = 60;
  session.heartbeat = job.spec.heartbeat;
  session.now_ms = NowUnixMs;
  return session;
}

// While the preflight waits: "preflight: 812 of 1000 node(s) answered;
// waiting on node[0012,0044] (15 s)", drawn in place on a terminal every
// second, else printed every 10 s; nothing for the first 2 s.
std::function<void(const std::vector<size_t>&, milliseconds)> PreflightProgress(std::vector<SessionNode> nodes,
                                                                              RunOutput& output) {
  bool in_place = isatty(STDERR_FILENO) == 1;
  return [nodes = std::move(nodes), &output, in_place](const std::vector<size_t>& waiting, milliseconds waited) {
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

}  // namespace

void AgentLink::AbortAndFinish() {
  session->Abort();
  queued->Finish();
}

Staged<ConnectedJob> ConnectStage(const RunOptions& options, OrderedJob ordered) {
  Result<std::optional<SshOptions>> ssh = SshOptionsOfJob(options, ordered);
  if (!ssh.ok()) return EndPass(ReportError(ssh.error()));
  ConnectedJob job{std::move(ordered), "", {}};
  if (job.spec.master_addr.empty() && !job.nodes.empty()) job.spec.master_addr = DefaultMasterAddress(*ssh, job.nodes.front().host);
  job.master_addr = MasterAddress(job.spec, job.order);
  SessionOptions session = SessionOptionsOfJob(options, job);
  AgentLink& agents = job.agents;
  agents.executor = MakeExecutor(options, job, *ssh, session.preflight_timeout);
  Result<std::unique_ptr<RunOutput>> output = OpenRunOutput(options.log_dir, options.ranks_output, job.nodes);
  if (!output.ok()) return EndPass(ReportError(output.error()));
  agents.output = std::move(output).value();
  if (!options.log_dir.empty())
    Note(fmt::format("each rank's output goes to {0}/RANK.log, each node's own to {0}/HOST.log", options.log_dir));
  session.preflight_progress = PreflightProgress(job.nodes, *agents.output);

  CatchStopSignals();
  // Lines go through a bounded queue: a stalled terminal drops lines, never
  // heartbeats (the executors' threads carry both).
  agents.queued = std::make_unique<QueuedLinePrinter>(agents.output->printer(), [](std::string_view text) { Note(text); });
  agents.output->queued = agents.queued.get();
  agents.session = std::make_unique<RunSession>(*agents.executor, job.nodes, std::move(session), *agents.queued);
  return job;
}

}  // namespace topolaunch::run
