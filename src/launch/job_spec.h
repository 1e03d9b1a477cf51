// What one `topolaunch run` job runs on each node, as pure values: the
// torchrun command line for a node of the plan, and the environment that
// goes with it in the agent's launch message.
//
// Each node runs (static rendezvous: node ranks are the plan's; c10d would
// renumber nodes by sorted host name and undo it):
//
//   TORCHRUN --nnodes=N --nproc_per_node=K --node_rank=R --master_addr=A
//            --master_port=P --rdzv_backend=static --no_python
//            TOPOLAUNCH bind -- PYTHON SCRIPT ARGS...
//
// The underscore spellings are the ones torch 1.13 knows; torch 2 accepts
// both. `--no_python` makes torchrun start `topolaunch bind` as the worker,
// which applies the local rank's binding (TOPOLAUNCH_BINDINGS) and execs
// the Python script, so the script's PID is the one torchrun watches.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launch/launch_message.h"
#include "topolaunch/plan.h"
#include "topolaunch/result.h"

namespace topolaunch {

using EnvList = std::vector<std::pair<std::string, std::string>>;

/// The job as the user asked for it.
struct JobSpec {
  std::vector<std::string> torchrun{"torchrun"};  ///< --torchrun, split into words
  std::string python = "python3";                 ///< interpreter on the nodes
  std::string topolaunch = "topolaunch";          ///< this program's path on the nodes (for `bind`)
  std::string script;
  std::vector<std::string> script_args;
  std::string master_addr;                        ///< "" = the node-rank-0 host's name
  int master_port = 29500;
  std::string cwd;                                ///< "" = the login directory on each node
  std::chrono::milliseconds grace{3000};          ///< SIGTERM → SIGKILL on the nodes
  std::chrono::milliseconds heartbeat{5000};      ///< LaunchMessage::heartbeat; 0: off
};

/// The master address the nodes use: spec.master_addr, else node rank 0's host.
std::string MasterAddress(const JobSpec& spec, const Plan& plan);

/// TORCHRUN and its rendezvous options for `node`: the file comment's line
/// up to `--rdzv_backend=static`.
std::vector<std::string> TorchrunRendezvousArgv(const JobSpec& spec, const Plan& plan, const PlanNode& node);

/// torchrun's argv for `node` (see the file comment).
std::vector<std::string> TorchrunArgv(const JobSpec& spec, const Plan& plan, const PlanNode& node);

/// `plan --format torchrun`: per node in node-rank order, `HOST` and a tab,
/// then its shell-quoted TorchrunRendezvousArgv (torchrun, master node rank
/// 0's host, `master_port`), for the user to append the script to; the
/// bindings are not in it (they are `topolaunch run`'s, through `bind`).
std::string FormatPlanTorchrunLines(const Plan& plan, int master_port);

/// The launch message for `node`: TorchrunArgv, `env` followed by
/// TOPOLAUNCH_BINDINGS (when any rank is bound), the cwd, grace and
/// heartbeat, and each rank's output labelled on its own connection.
LaunchMessage NodeLaunchMessage(const JobSpec& spec, const Plan& plan, const PlanNode& node, EnvList env);

/// Splits a command given as one string (`--torchrun "torchrun --redirects 9:0"`)
/// into words the way a POSIX shell would without expansions: blanks
/// separate, '...' and "..." quote, backslash escapes. Errors: kBadUsage
/// naming `what` for an unterminated quote or an empty command.
Result<std::vector<std::string>> SplitCommandWords(std::string_view text, std::string_view what);

}  // namespace topolaunch
