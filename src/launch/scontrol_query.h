// SrunPortRange as the site's slurmctld has it: `scontrol show config`.
// Read from slurmctld rather than from a slurm.conf here, so that login
// nodes without one (configless sites, sackd) get it too.
#pragma once

#include <optional>

#include "launch/srun_port_range.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// nullopt when the site sets no range. Errors: kUnavailable (scontrol not
/// on PATH, or it failed or took over 10 s: its last words), kBadInput (a
/// range that is not one).
Result<std::optional<PortRange>> QuerySrunPortRange();

}  // namespace topolaunch
