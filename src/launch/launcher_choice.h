// Which engine `topolaunch run` starts the nodes' agents with, and why, from
// facts the caller gathers (the environment, PATH): pure.
//
//   auto   srun inside a Slurm allocation (SLURM_JOB_ID set, srun on PATH),
//          else ssh when hosts are given, else this machine alone;
//   ssh    libssh2 to every host, inside an allocation or not;
//   srun   one step of the job per node; refused outside an allocation,
//          where srun would make a new job for every node;
//   local  this machine alone, no hosts.
#pragma once

#include <string>

#include "topolaunch/result.h"

namespace topolaunch {

enum class LauncherKind { kLocal, kSsh, kSrun };

struct LauncherFacts {
  std::string requested = "auto";  ///< --launcher: auto, ssh, srun or local
  std::string slurm_job_id;        ///< SLURM_JOB_ID, "" outside an allocation
  std::string srun_path;           ///< where srun is on PATH, "" when it is not
  std::string hosts_source;        ///< "--hosts", "--hostfile", "SLURM_JOB_NODELIST" or "" (none)
  int step_tasks = 0;              ///< SLURM_STEP_NUM_TASKS: `run` is a task of a step of this many; 0 outside one
};

struct LauncherChoice {
  LauncherKind kind = LauncherKind::kLocal;
  std::string why;  ///< one sentence for the run's first note
};

/// Errors (kBadUsage, naming --launcher): srun outside an allocation or
/// without srun; ssh without hosts; local with --hosts/--hostfile; an
/// unknown name. Whatever the launcher, `run` as one task of a step of
/// several (`srun -N4 topolaunch run ...`): each task would launch the
/// whole job, N agents on every node.
Result<LauncherChoice> ChooseLauncher(const LauncherFacts& facts);

}  // namespace topolaunch
