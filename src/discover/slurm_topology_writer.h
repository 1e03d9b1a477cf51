// Slurm topology.conf for topology/tree (`discover --format slurm`).
#pragma once

#include <string>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// A comment header, then leaf lines `SwitchName=... Nodes=<compressed
/// hostlist>` and upper levels `SwitchName=... Switches=...`, bottom up.
/// Each host appears once, under the leaf of its first cabled HCA (rail 0);
/// leaves without hosts and switches without written children are left out.
/// Names are unique, at most 64 characters (slurm_switch_names.h). Errors
/// (kBadInput): nothing to write (no leaf switch with hosts: never an empty
/// file), or a host name Slurm could not read.
Result<std::string> FormatSlurmTopologyConf(const Topology& topology);

}  // namespace topolaunch
