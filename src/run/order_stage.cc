// Order: the nodes in the order the fabric gives (rankmap/rank_map.cc says
// why that order), before any node is asked anything. A restart brings its
// own nodes (the survivors and their spares), and a replan the layouts an
// earlier pass learned; both are applied here, so the plan is made from
// everything known so far.
#include <fmt/format.h>

#include "core/console.h"
#include "core/hostlist.h"
#include "launch/srun_step_env.h"
#include "run/order_notes.h"
#include "run/stages.h"

namespace topolaunch::run {

namespace {


void ApplyPassRequest(PreparedJob& job, const PassRequest& request) {
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
}

}  // namespace

Staged<OrderedJob> OrderStage(const RunOptions& options, PreparedJob prepared, const PassRequest& request) {
  ApplyPassRequest(prepared, request);
  Result<Plan> order = ComputePlan(&prepared.topology, prepared.request);
  if (!order.ok()) return EndPass(ReportError(order.error()));
  OrderedJob job{std::move(prepared), std::move(order).value(), {}};
  for (const PlanNode& node : job.order.nodes) job.nodes.push_back({node.host, node.node_rank});
  if (request.restart == 0 && !request.hosts) {
    Note("launcher: " + job.launcher.why);
    if (job.launcher.kind == LauncherKind::kSrun && (options.dry_run || !job.step_dropped.empty() || job.step_gpus))
      Note(StepNote(job.step_dropped, job.step_gpus));
    if (!job.step_gpus_unread.empty())
      Note(fmt::format("srun step: the GPUs the job holds could not be read ({}); the step asks for none, and where "
                       "Slurm constrains devices its workers see only the GPUs the job asked for",
                       job.step_gpus_unread));
    for (const std::string& note : IdleHostNotes(job.hosts, job.request.nnodes, options.max_restarts, job.order)) Note(note);
  }
  // srun starts steps only on the allocation's nodes; a planned host outside
  // it is named before anything starts (Slurm's own refusal, "Requested node
  // configuration is not available", does not say which).
  std::vector<std::string> outside = job.launcher.kind == LauncherKind::kSrun
                                         ? HostsOutsideAllocation(job.allocation, job.nodes)
                                         : std::vector<std::string>{};
  if (!outside.empty()) {
    PrintTo(stderr, fmt::format("topolaunch: error: preflight: {} of {} node(s) not in Slurm job {}'s allocation ({}): {}; "
                                "srun starts steps only there, so nothing was started (--launcher ssh reaches other hosts)\n",
                                outside.size(), job.nodes.size(), job.slurm_job_id, job.allocation_list,
                                HostListForMessages(outside)));
    return EndPass(3);
  }
  return job;
}

}  // namespace topolaunch::run
