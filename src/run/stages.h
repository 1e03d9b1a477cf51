// `topolaunch run` as a pipeline. One pass of the job is these stages, in
// order, each in a file of its own and each handing the next one value:
//
//   prepare_stage.cc    options → PreparedJob: the script, the host pool and
//                       the launcher, the forwarded environment, the fabric
//                       (a topology.json or a live walk), torchrun's spec.
//   order_stage.cc      → OrderedJob: what this pass was asked (a restart's
//                       nodes, layouts an earlier pass learned), the node
//                       order the fabric gives, which hosts stay idle.
//   connect_stage.cc    → ConnectedJob: how the nodes are reached (SSH
//                       settings, srun, this machine), the master address,
//                       where output goes, the session with their agents.
//   preflight_stage.cc  → PreflightedJob: every agent started and its reply
//                       judged; the GPU counts give the ranks per node; a
//                       node not ready ends the pass (in a restart, as lost).
//   plan_stage.cc       → Plan: the order again, now with the nodes' own
//                       layouts for their bindings; NVLink domains that only
//                       those layouts show end the pass with a replan.
//   launch_stage.cc     → SessionReport: each node's environment and torchrun
//                       command, then --dry-run's listing, or the launch
//                       supervised to its end.
//   report_stage.cc     → PassResult: the summary, and what the restart loop
//                       needs to choose the next attempt.
//
// run_job.cc drives them: the restart loop (launch/restart_loop.h) asks for
// passes, and a pass is the stages above. Each value extends the one before
// it, so a later stage reads the job's facts where the earlier one put them.
// A stage that ends the pass early (an error, already reported; a dry run
// done; a preflight that failed; a replan) returns the pass's PassResult
// instead of its value. Every stage talks to the person as it goes
// (core/console.h), in the order the user has always seen.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "launch/executor.h"
#include "launch/job_spec.h"
#include "launch/launcher_choice.h"
#include "launch/queued_printer.h"
#include "launch/restart_loop.h"
#include "launch/run_session.h"
#include "launch/srun_step_env.h"
#include "rankmap/plan_builder.h"
#include "run/run_options.h"
#include "run/run_output.h"
#include "topolaunch/plan.h"
#include "topolaunch/topology.h"

namespace topolaunch::run {

/// A stage's value for the next stage, or the end of the pass.
template <typename T>
using Staged = std::variant<T, PassResult>;

template <typename T>
bool Ended(const Staged<T>& staged) {
  return std::holds_alternative<PassResult>(staged);
}

/// The pass's end (Ended() was true).
template <typename T>
PassResult TakeEnd(Staged<T>& staged) {
  return std::move(std::get<PassResult>(staged));
}

/// The stage's value (Ended() was false).
template <typename T>
T TakeValue(Staged<T>& staged) {
  return std::move(std::get<T>(staged));
}

/// A pass that ends with this exit status and nothing for the loop.
PassResult EndPass(int status);

/// The job as the options describe it, before any node is touched.
struct PreparedJob {
  std::chrono::steady_clock::time_point started;  ///< when the pass began
  bool local = false;                   ///< this machine alone
  LauncherChoice launcher;
  std::string srun;                     ///< srun's path, for the srun launcher
  std::vector<std::string> step_dropped;  ///< srun: the job's variables the agents' step does not take
  std::optional<StepGpus> step_gpus;      ///< srun: the GPUs the step asks for (what the job holds on a node)
  std::string step_gpus_unread;           ///< srun: why the GPUs the job holds could not be read, if so
  std::string slurm_job_id;
  std::string allocation_list;          ///< SLURM_JOB_NODELIST
  std::vector<std::string> allocation;  ///< its hosts
  std::vector<std::string> hosts;       ///< the pool
  Topology topology;
  PlanRequest request;
  JobSpec spec;
  EnvList forwarded;             ///< --env and --env-file
  bool ranks_from_gpus = false;  ///< no --nproc-per-node nor slots: one rank per GPU the nodes report
  int restart = 0;               ///< which attempt this is (0: the first)
};

/// The job with its nodes in the fabric's order.
struct OrderedJob : PreparedJob {
  Plan order;                      ///< planned from the topology alone
  std::vector<SessionNode> nodes;  ///< order's nodes, in node-rank order
};

/// The session with the nodes' agents and where their lines go. Each part
/// holds on to the one before it (the session prints through the queue, the
/// queue through the output, which the progress line also reads), so they
/// live on the heap and end in reverse order.
struct AgentLink {
  std::unique_ptr<Executor> executor;
  std::unique_ptr<RunOutput> output;
  std::unique_ptr<QueuedLinePrinter> queued;
  std::unique_ptr<RunSession> session;
  /// Tells every agent to start nothing and waits for them; then every
  /// queued line is printed.
  void AbortAndFinish();
};

/// The job with a way to its nodes; nothing started on them yet.
struct ConnectedJob : OrderedJob {
  std::string master_addr;  ///< what the nodes reach rank 0 at
  AgentLink agents;
};

/// The job whose every node answered its preflight and was judged ready.
struct PreflightedJob : ConnectedJob {
  std::vector<NodePreflight> preflight;  ///< in node order
};

// The stages, in the order a pass runs them.

/// Reads the options, the host pool, the forwarded environment and the
/// fabric. Errors are reported and end the pass (2 for bad usage or input).
Staged<PreparedJob> PrepareStage(const RunOptions& options, const RunContext& context,
                                 const std::vector<std::string>& script_and_args);

/// Applies what the pass was asked (a restart's nodes, learned layouts) and
/// orders the nodes by the fabric. Ends the pass (3) when srun would be
/// asked for hosts outside the allocation.
Staged<OrderedJob> OrderStage(const RunOptions& options, PreparedJob job, const PassRequest& request);

/// Reads the SSH settings (the SSH launcher), chooses the master address,
/// opens the output and makes the session; nothing is started yet.
Staged<ConnectedJob> ConnectStage(const RunOptions& options, OrderedJob job);

/// Starts every agent and judges their replies. Ends the pass on a stop
/// (130), a node not ready (3, or in a restart the nodes lost), or GPU
/// counts that disagree.
Staged<PreflightedJob> PreflightStage(const RunOptions& options, ConnectedJob job, const PassRequest& request);

/// The plan with the nodes' own layouts. Ends the pass with a replan when
/// they move the order (NVLink domains), or on an error.
Staged<Plan> PlanStage(PreflightedJob& job, const PassRequest& request);

/// Builds each node's launch message, then prints them (--dry-run, ending
/// the pass with 0) or launches them and supervises to the end.
Staged<SessionReport> LaunchStage(const RunOptions& options, const RunContext& context, PreflightedJob& job,
                                  const Plan& plan);

/// Prints the summary and says how the attempt ended.
PassResult ReportStage(PreflightedJob& job, const Plan& plan, const SessionReport& report);

/// `result` completed as an attempt the restart loop may follow with
/// another: its nodes, the pool and topology spares are chosen from, how
/// long it took. Takes the job's topology.
PassResult EndAttempt(PassResult result, PreparedJob& job, const std::vector<SessionNode>& nodes);

}  // namespace topolaunch::run
