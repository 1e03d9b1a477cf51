// The plan in the files other launchers read, so a job started by them gets
// the same rank order `topolaunch run` would use.
#pragma once

#include <string>

#include "topolaunch/plan.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// `HOST slots=N` per node in node-rank order: the hostfile of DeepSpeed
/// (`deepspeed --hostfile FILE`) and Open MPI (`mpirun --hostfile FILE`), both
/// of which fill the hosts with ranks in file order.
std::string FormatPlanHostfile(const Plan& plan);

/// One line per rank, the rank's host, rank 0 first: for
/// `SLURM_HOSTFILE=FILE srun --distribution=arbitrary -n WORLD`, which gives
/// task i the host on line i.
std::string FormatPlanSlurmHostfile(const Plan& plan);

/// An Open MPI rankfile, `rank R=HOST slot=CPUS` per rank in rank order,
/// CPUS the rank's PU OS indexes as a cpulist: for
/// `mpirun --rankfile FILE --mca rmaps_rank_file_physical 1`, which reads
/// each number as a PU's OS index and binds the core holding it (with
/// `--use-hwthread-cpus`, the PU itself). Open MPI's default, logical
/// numbers, would differ wherever the OS numbers hyperthreads apart.
/// Error (kBadInput, naming the hosts): a rank with no CPUs (its host's
/// layout is unknown): a rankfile line needs a slot list.
Result<std::string> FormatPlanRankfile(const Plan& plan);

}  // namespace topolaunch
