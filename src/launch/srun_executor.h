// SrunExecutor: starts each request as a one-task step of the Slurm job
// this process runs in, on the request's host, through another Executor
// that runs `srun` here (LocalExecutor in the binary, a fake in tests).
//
// One srun per node, not one srun for all nodes: each node's agent needs a
// stdin of its own (its launch message holds that node's settings and the
// forwarded secrets, and reaches only that node), and an exit status and a
// stop of its own. srun carries the step's stdin to the task over Slurm's
// own authenticated I/O connection, so nothing secret is on a command line
// or in a file. The task is in the job: accounting, cgroups, scancel and
// the time limit reach the agent and every worker it starts.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "launch/command.h"
#include "launch/executor.h"

namespace topolaunch {

/// `srun --nodes=1 --ntasks=1 --ntasks-per-node=1 --nodelist=HOST --overlap
/// --kill-on-bad-exit=1 --unbuffered --quiet [--chdir=CWD] -- ARGV...`, the
/// inner command's environment set on srun (which exports it to the task).
/// Explicit counts win over SLURM_NTASKS and the like inherited from sbatch;
/// --overlap lets the step share the node with the job's other steps (a
/// step takes all of a node's CPUs and GPUs by default, which the workers
/// need); -u passes the agent's lines on as they are written.
Command SrunStepCommand(const std::string& srun, const std::string& host, const Command& inner);

class SrunExecutor : public Executor {
 public:
  /// How long srun gets to cancel its step after SIGTERM before SIGKILL
  /// (a killed srun can leave the step's task running until its agent's
  /// heartbeat runs out).
  static constexpr std::chrono::milliseconds kCancelGrace{5000};

  /// `srun` is the path of srun; `base` runs it on this machine.
  SrunExecutor(std::string srun, std::unique_ptr<Executor> base) : srun_(std::move(srun)), base_(std::move(base)) {}
  /// Each request's command runs under SrunStepCommand on its host. Stop on
  /// a started step closes its stdin first (the agent stops its workers
  /// with their grace), then after `grace` stops srun, which cancels the
  /// step.
  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;

 private:
  std::string srun_;
  std::unique_ptr<Executor> base_;
};

}  // namespace topolaunch
