// Plan: the plan again, now with each node's own layout for its bindings
// (rankmap/bindings.cc: the CPUs, memory and NIC nearest each rank's GPU).
// The order was fixed by the fabric before the preflight; only NVLink
// domains that the nodes' own layouts show (and the topology did not) can
// move it. Nothing has started then, so the pass ends with a replan: the
// next pass plans with those layouts and gives the new order a preflight of
// its own.
#include <fmt/format.h>

#include "core/console.h"
#include "run/order_notes.h"
#include "run/stages.h"

namespace topolaunch::run {

namespace {

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

PassResult Replanned(PreflightedJob& job, const PassRequest& request, const Plan& plan) {
  job.agents.AbortAndFinish();
  if (request.replan)
    return EndPass(ReportError(Error(ErrorCode::kInternal, "run", "the node order changed once the layouts were known")));
  Note(fmt::format("the nodes' own layouts put them in NVLink domains ({}): planning again so that each domain's "
                   "ranks are together, then a new preflight (a topology.json with the nodes' layouts gives this "
                   "order at once: discover --layout-dir with each node's HOST.json)",
                   DomainsOfPlan(plan)));
  PassResult result;
  result.replan = Replan{std::move(job.topology), {}};
  for (const SessionNode& node : job.nodes) result.replan->hosts.push_back(node.host);
  return result;
}

}  // namespace

Staged<Plan> PlanStage(PreflightedJob& job, const PassRequest& request) {
  AttachNodeLayouts(job.topology, job.nodes, job.preflight);
  Result<Plan> plan = ComputePlan(&job.topology, job.request);
  if (!plan.ok()) {
    job.agents.session->Abort();
    return EndPass(ReportError(plan.error()));
  }
  if (ReorderedByDomains(*plan, job.nodes)) return Replanned(job, request, *plan);
  for (const std::string& note : plan->notes) Note(note);
  return std::move(plan).value();
}

}  // namespace topolaunch::run
