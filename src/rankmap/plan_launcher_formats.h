// The plan in the files other launchers read, so a job started by them gets
// the same rank order `topolaunch run` would use.
#pragma once

#include <string>

#include "topolaunch/plan.h"

namespace topolaunch {

/// `HOST slots=N` per node in node-rank order: the hostfile of DeepSpeed
/// (`deepspeed --hostfile FILE`) and Open MPI (`mpirun --hostfile FILE`), both
/// of which fill the hosts with ranks in file order.
std::string FormatPlanHostfile(const Plan& plan);

/// One line per rank, the rank's host, rank 0 first: for
/// `SLURM_HOSTFILE=FILE srun --distribution=arbitrary -n WORLD`, which gives
/// task i the host on line i.
std::string FormatPlanSlurmHostfile(const Plan& plan);

}  // namespace topolaunch
