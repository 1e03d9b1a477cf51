// Preflight: every node's agent started and asked whether the node can run
// the job (launch/preflight.h lists what is checked), in parallel; one node
// not ready and nothing starts anywhere. The replies also carry what the
// plan needs next: GPU counts (the ranks per node when none are given) and
// each node's own layout.
//
// In a restart a node not ready is the node's fault when others are ready:
// it is reported lost, and the restart loop replaces it by a spare. When
// every node of several fails, the cause is the job's (its script gone, the
// login side's clock), not theirs: nobody is dropped, the job failed.
#include <fmt/format.h>

#include "core/console.h"
#include "core/hostlist.h"
#include "launch/run_report.h"
#include "run/preflight_verdict.h"
#include "run/stages.h"
#include "run/stop_signals.h"

namespace topolaunch::run {

namespace {

PreflightExpectations ExpectationsOfJob(const RunOptions& options, const ConnectedJob& job) {
  PreflightExpectations expect;
  expect.nproc_per_node = job.request.nproc_per_node.value_or(1);
  expect.require_gpus = !options.no_gpus;
  expect.master_host = job.nodes.front().host;
  expect.master_port = job.spec.master_port;
  expect.master_addr = job.master_addr;
  expect.want_interpreter = job.spec.python.empty();
  expect.audit = options.audit;
  return expect;
}

// Without --nproc-per-node or slots: one rank per GPU, as every node
// reports (a restart keeps the first attempt's count). Errors: the nodes
// disagree.
Status TakeRanksFromGpus(PreflightedJob& job, const PassRequest& request) {
  if (job.ranks_from_gpus && request.ranks_per_node) {  // a restart: as many ranks as the first attempt
    job.request.nproc_per_node = *request.ranks_per_node;
    job.ranks_from_gpus = false;
  }
  if (!job.ranks_from_gpus) return Ok{};
  std::optional<Result<int>> ranks = RanksPerNodeFromReplies(job.nodes, job.preflight);
  if (!ranks) return Ok{};
  if (!ranks->ok()) return ranks->take_error();
  job.request.nproc_per_node = **ranks;
  Note(fmt::format("--nproc-per-node {}: one rank per GPU, as every node reports", **ranks));
  return Ok{};
}

// Nodes not ready: in a restart, lost when it is theirs (the file comment);
// else the error, and nothing was started.
PassResult NotReady(PreflightedJob& job, const PassRequest& request, const std::vector<std::vector<std::string>>& problems,
                    size_t bad) {
  job.agents.AbortAndFinish();
  PassResult result = EndPass(3);
  const std::vector<SessionNode>& nodes = job.nodes;
  bool nodes_fault = nodes.size() == 1 || bad < nodes.size();
  if (request.restart > 0 && nodes_fault) {
    Note(fmt::format("preflight of restart {}: {} of {} node(s) not ready, dropped:\n{}", request.restart, bad,
                     nodes.size(), FormatPreflightProblems(nodes, problems)));
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!problems[i].empty()) result.lost.push_back(nodes[i].host);
    result.outcome = fmt::format("preflight: not ready: {}", HostListForMessages(result.lost));
    return EndAttempt(std::move(result), job, nodes);
  }
  PrintTo(stderr, fmt::format("topolaunch: error: preflight{}: {} of {} node(s) not ready; nothing was started{}:\n{}",
                              request.restart > 0 ? fmt::format(" of restart {}", request.restart) : "", bad, nodes.size(),
                              request.restart > 0 ? " (every node: the fault is the job's, no node is dropped)" : "",
                              FormatPreflightProblems(nodes, problems)));
  if (request.restart > 0) result.status = 1;  // the job ran and failed
  return result;
}

}  // namespace

Staged<PreflightedJob> PreflightStage(const RunOptions& options, ConnectedJob connected, const PassRequest& request) {
  PreflightedJob job{std::move(connected), {}};
  AgentLink& agents = job.agents;
  Note(fmt::format("preflight on {} node(s)", job.nodes.size()));
  job.preflight = agents.session->Preflight(StopRequested());
  agents.queued->Status("");
  if (StopRequested()) {
    agents.session->Abort();
    Note("interrupted during preflight: nothing was started");
    return EndPass(130);
  }
  FillKnownGpuCounts(job.topology, job.nodes, job.preflight);
  if (Status ranks = TakeRanksFromGpus(job, request); !ranks.ok()) {
    agents.AbortAndFinish();
    return EndPass(ReportError(ranks.error()));
  }
  std::vector<std::vector<std::string>> problems = JudgeNodes(ExpectationsOfJob(options, job), job.nodes, job.preflight);
  if (size_t bad = CountNotReady(problems)) return NotReady(job, request, problems, bad);
  if (job.spec.python.empty()) Note(InterpreterNote(job.nodes, job.preflight));
  return job;
}

}  // namespace topolaunch::run
