// Report: the run's summary (launch/run_report.h) once every node has
// ended, and the attempt as the restart loop sees it: the exit status, the
// nodes lost (launch/attempt_outcome.h tells a lost node from a failed
// worker), and what spares are chosen from.
#include "core/console.h"
#include "launch/attempt_outcome.h"
#include "launch/run_report.h"
#include "run/stages.h"

namespace topolaunch::run {

PassResult EndAttempt(PassResult result, PreparedJob& job, const std::vector<SessionNode>& nodes) {
  for (const SessionNode& node : nodes) result.order.push_back(node.host);
  result.pool = job.hosts;
  result.allow_unknown = job.request.allow_unknown;
  result.topology = std::make_shared<const Topology>(std::move(job.topology));
  result.lasted = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - job.started);
  return result;
}

PassResult ReportStage(PreflightedJob& job, const Plan& plan, const SessionReport& report) {
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - job.started);
  job.agents.queued->Finish();  // every line before the summary
  PrintTo(stderr, FormatRunSummary(plan, report, wall));
  PassResult result = EndPass(report.interrupted ? 130 : report.first_failure ? 1 : 0);
  result.ran = true;
  if (job.ranks_from_gpus) result.ranks_per_node = job.request.nproc_per_node;
  result.outcome = report.interrupted ? "interrupted" : "ok";
  if (!report.interrupted && report.first_failure) {
    AttemptFailure failure = ClassifyFailure(job.nodes, report);
    for (size_t i : failure.lost) result.lost.push_back(job.nodes[i].host);
    result.outcome = "failed: " + failure.what;
  }
  return EndAttempt(std::move(result), job, job.nodes);
}

}  // namespace topolaunch::run
