// slurm.conf's SrunPortRange, as `scontrol show config` prints it: pure.
//
// Sites whose firewalls admit compute nodes' connections to login nodes
// only on the ports srun listens on name them in slurm.conf
// (`SrunPortRange=60001-63000`). The agents' connections back to `run` are
// such connections, so `run` listens on a port of that range too.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

struct PortRange {
  int first = 0;
  int last = 0;
  bool operator==(const PortRange&) const = default;
};

/// From `scontrol show config` output: the range of its SrunPortRange line,
/// nullopt when there is none or it is "0-0" (srun then takes any port).
/// Errors: kBadInput naming the line when it is not FIRST-LAST with
/// 1 <= FIRST <= LAST <= 65535.
Result<std::optional<PortRange>> ParseSrunPortRange(std::string_view config);

/// "60001-63000".
std::string FormatPortRange(const PortRange& range);

}  // namespace topolaunch
