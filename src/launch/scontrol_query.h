// What the site's slurmctld says, through `scontrol`: read from slurmctld
// rather than from a slurm.conf here, so that login nodes without one
// (configless sites, sackd) get it too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch/job_held_gpus.h"
#include "launch/srun_port_range.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// `scontrol ARGS...`'s standard output. Errors: kUnavailable (scontrol
/// not on PATH, or it failed or took over 10 s: its last words).
Result<std::string> RunScontrol(const std::vector<std::string>& args);

/// SrunPortRange (`scontrol show config`); nullopt when the site sets no
/// range. Errors: as RunScontrol, kBadInput (a range that is not one).
Result<std::optional<PortRange>> QuerySrunPortRange();

/// The GPUs job `job_id` holds on its nodes (`scontrol -d -o show job`).
/// Errors: as RunScontrol, kBadInput (a detail that cannot be read).
Result<JobGpus> QueryHeldGpus(const std::string& job_id);

}  // namespace topolaunch
