// Launch: each node's launch message (its torchrun command and its
// environment: the NCCL settings the env rules derive from the node's own
// facts, then what the user forwards), then either --dry-run's listing of
// them or the launch, supervised until every node has ended.
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/console.h"
#include "env/compute_ports.h"
#include "env/env_builder.h"
#include "env/env_templates.h"
#include "env/socket_stripes.h"
#include "launch/job_env.h"
#include "launch/run_report.h"
#include "run/stages.h"
#include "run/stop_signals.h"

namespace topolaunch::run {

namespace {

// The NCCL settings the env rules derive for one node from its own facts,
// then PYTHONUNBUFFERED (lines arrive as printed, and a failing rank's last
// lines are not lost in a buffer), then what the user forwards, which wins.
Result<EnvList> NodeEnv(const RunOptions& options, const RunContext& context, const PreflightedJob& job,
                        const std::string& host, const PreflightReply& reply, std::vector<std::string> stripe) {
  EnvFacts facts;
  facts.topology = &job.topology;
  facts.host = host;
  facts.rdma_ports = reply.rdma_ports;
  facts.rank0_host = job.master_addr;
  facts.socket_route = reply.socket_route;
  facts.socket_route_problem = reply.socket_route_problem;
  facts.socket_interfaces = reply.socket_interfaces;
  facts.stripe_interfaces = std::move(stripe);
  FabricKind kind = options.profile == "auto" ? DetectFabricKind(facts) : *ParseFabricKind(options.profile);
  Result<std::vector<TemplateLine>> templates =
      LoadEnvTemplates(options.templates.empty() ? context.default_templates : options.templates, kind);
  if (!templates.ok()) return templates.take_error();
  std::map<std::string, std::string> user(job.forwarded.begin(), job.forwarded.end());
  Result<EnvOutcome> outcome = ComputeEnv(facts, {kind, std::move(templates).value(), user, false});
  if (!outcome.ok()) return outcome.take_error();
  EnvList env;
  for (const EnvVariable& v : outcome->variables)
    if (v.source != EnvSource::kUser) env.emplace_back(v.name, v.value);
  env = MergeEnv(env, {{"PYTHONUNBUFFERED", "1"}});
  env = MergeEnv(env, job.forwarded);
  // With --max-restarts the workers learn which attempt they are in (torchrun
  // sets TORCHELASTIC_RESTART_COUNT=0 under static rendezvous, whatever we do).
  if (options.max_restarts > 0) env = MergeEnv(env, {{"TOPOLAUNCH_RESTART_COUNT", std::to_string(job.restart)}});
  return env;
}

// Each node's launch message: its torchrun command and its environment.
Result<std::vector<LaunchMessage>> BuildLaunches(const RunOptions& options, const RunContext& context,
                                                 const PreflightedJob& job, const Plan& plan) {
  // On TCP every node stripes over the interfaces on subnets all of them have.
  std::vector<std::vector<SocketInterface>> interfaces;
  for (const NodePreflight& node : job.preflight) interfaces.push_back(node.reply->socket_interfaces);
  std::set<Ipv4Subnet> shared = SharedSubnets(interfaces);
  std::vector<LaunchMessage> messages;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const PreflightReply& reply = *job.preflight[i].reply;
    std::vector<std::string> stripe =
        reply.socket_route ? StripeInterfaces(reply.socket_interfaces, shared, reply.socket_route->interface) : std::vector<std::string>{};
    Result<EnvList> env = NodeEnv(options, context, job, plan.nodes[i].host, reply, std::move(stripe));
    if (!env.ok()) return env.take_error();
    JobSpec spec = job.spec;
    if (spec.python.empty()) spec.python = reply.interpreter;  // torchrun's own, on this node
    messages.push_back(NodeLaunchMessage(spec, plan, plan.nodes[i], std::move(env).value()));
  }
  return messages;
}

// A --ranks-output rank must be in the job.
Status CheckRanksOutput(const std::optional<RankSet>& ranks, const Plan& plan) {
  if (!ranks || ranks->Highest() < plan.world_size) return Ok{};
  return Error(ErrorCode::kBadUsage, "--ranks-output",
               fmt::format("rank {} is not in the job (ranks 0-{})", ranks->Highest(), plan.world_size - 1));
}

}  // namespace

Staged<SessionReport> LaunchStage(const RunOptions& options, const RunContext& context, PreflightedJob& job,
                                  const Plan& plan) {
  AgentLink& agents = job.agents;
  Result<std::vector<LaunchMessage>> launches = BuildLaunches(options, context, job, plan);
  if (!launches.ok()) {
    agents.session->Abort();
    return EndPass(ReportError(launches.error()));
  }
  if (Status ranks = CheckRanksOutput(agents.output->ranks_output, plan); !ranks.ok()) {
    agents.session->Abort();
    return EndPass(ReportError(ranks.error()));
  }
  if (options.dry_run) {
    agents.AbortAndFinish();
    if (!PrintTo(stdout, FormatDryRun(plan, *launches)))
      return EndPass(ReportError(Error(ErrorCode::kUnavailable, "stdout", "write failed")));
    return EndPass(0);
  }
  Note(fmt::format("starting {} rank(s) on {} node(s), master {}:{}", plan.world_size, job.nodes.size(), job.master_addr,
                   job.spec.master_port));
  return agents.session->Launch(*launches, StopRequested());
}

}  // namespace topolaunch::run
