// Slurm's task variables in a worker, made to agree with torchrun's ranks:
// pure.
//
// Under `run --launcher srun` every worker descends from its node's agent,
// one task of the agents' step, and inherits that task's variables:
// SLURM_PROCID is the node's index, SLURM_NTASKS the node count,
// SLURM_LOCALID 0. Frameworks that trust Slurm's variables read them as
// rank and world size (PyTorch Lightning tries its SLURMEnvironment before
// torchrun's), and would train with wrong ranks. `topolaunch bind` sets
// them from torchrun's own (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// GROUP_RANK) before it execs the worker, and drops what describes the
// agent's task alone. Job-wide variables (SLURM_JOB_ID, the node list, the
// allocation's CPUs) stay as Slurm set them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace topolaunch {

struct EnvChange {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;
  bool operator==(const EnvChange&) const = default;
};

/// For a worker whose environment is `get` (nullopt: not set) and whose
/// variable names are `names`: nothing outside a Slurm task (no
/// SLURM_PROCID) or without torchrun's five variables; else SLURM_PROCID,
/// SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_NPROCS,
/// SLURM_NTASKS_PER_NODE and SLURM_STEP_NUM_TASKS from torchrun's ranks,
/// and the agent task's own (SLURM_GTIDS, SLURM_TASK_PID, SLURM_CPU_BIND*,
/// SLURM_STEP_TASKS_PER_NODE, PMI_*, PMIX_*) removed.
EnvChange SlurmVariablesForRank(const std::function<std::optional<std::string>(const std::string&)>& get,
                                const std::vector<std::string>& names);

}  // namespace topolaunch
