// SrunExecutor: starts every request as one task of a single step of the
// Slurm job this process runs in, one task per host, through another
// Executor that runs `srun` here (LocalExecutor in the binary, a fake in
// tests).
//
// One step for all nodes, so step creation fans out through slurmd's tree
// and the batch node runs one srun, not one per node. srun gives every task
// the same stdin, so each node's own stdin (its launch message, with the
// forwarded secrets) cannot travel there: the step's stdin carries one
// connect-back line (connect_back.h) and each agent connects back to this
// process over TCP, proving a key bound to its node name; its conversation
// then runs, sealed, over that connection (connect_back_hub.h). The step's
// secret travels as the launch messages did before, over Slurm's own I/O
// connection; nothing secret is on a command line or in a file. The task is in the job:
// accounting, cgroups, scancel and the time limit reach the agent and every
// worker it starts.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "launch/command.h"
#include "launch/connect_back_listener.h"
#include "launch/executor.h"

namespace topolaunch {

/// `srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=HOSTS --overlap
/// --kill-on-bad-exit=1 --unbuffered --label --quiet --mpi=none
/// --cpu-bind=none --export=ALL [--chdir=CWD] -- ARGV...`, the inner
/// command's environment set on srun (which exports it to the tasks), and
/// the job's per-task requests (srun_step_env.h) unset. Explicit counts win
/// over SLURM_NTASKS and the like inherited from sbatch; --overlap lets the
/// step share the nodes with the job's other steps (a step takes all of a
/// node's CPUs and the GPUs the job asked for by default, which the workers
/// need); --label marks what an agent writes to srun's own output (only
/// before it connected back) with its task id.
/// `extra`: more options before "--" (the step's GPUs: srun_step_env.h).
Command SrunStepCommand(const std::string& srun, const std::vector<std::string>& hosts, const Command& inner,
                        const std::vector<std::string>& extra = {});

class SrunExecutor : public Executor {
 public:
  /// After srun ended (killed, or the job cancelled), a node still
  /// connected this long counts as lost.
  static constexpr std::chrono::milliseconds kLostAfterStep{3000};
  /// How long srun gets to end by itself once every connection is closed,
  /// and then to cancel its step after SIGTERM before SIGKILL.
  static constexpr std::chrono::milliseconds kCancelGrace{5000};

  /// `srun` is the path of srun; `base` runs it on this machine; each
  /// agent has `connect_timeout` from the start to connect back, to
  /// `listen.address` when given (run --connect-back-address), else to the
  /// address srun came from, on a port of `listen.ports` when given
  /// (SrunPortRange).
  /// `step_options` go to SrunStepCommand's `extra`.
  SrunExecutor(std::string srun, std::unique_ptr<Executor> base,
               std::chrono::milliseconds connect_timeout = std::chrono::seconds(60), ListenOn listen = {},
               std::vector<std::string> step_options = {})
      : srun_(std::move(srun)),
        base_(std::move(base)),
        connect_timeout_(connect_timeout),
        listen_(std::move(listen)),
        step_options_(std::move(step_options)) {}
  /// Every request must run the same command (the agent); what differs per
  /// host is its stdin_data. Returns once every agent connected back, srun
  /// ended, or the connect timeout passed; a host whose agent did not
  /// connect gets an error naming it (with srun's own lines when srun
  /// ended). Stop on a node closes its connection's input first (the agent
  /// stops its workers with their grace), then, after `grace`, the
  /// connection; once every node's command is gone, srun is stopped if it
  /// still runs (SIGTERM cancels the step).
  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;

 private:
  std::string srun_;
  std::unique_ptr<Executor> base_;
  std::chrono::milliseconds connect_timeout_;
  ListenOn listen_;
  std::vector<std::string> step_options_;
};

}  // namespace topolaunch
