// Slurm topology.conf for topology/tree (`discover --format slurm`).
#pragma once

#include <string>

#include "discover/slurm_topology_tree.h"
#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// A comment header (what was written, what was left out and why), then leaf
/// lines `SwitchName=... Nodes=<compressed hostlist>` and upper levels
/// `SwitchName=... Switches=...`, bottom up: the tree of
/// slurm_topology_tree.h. Errors: those of BuildSlurmTree (never an empty
/// file).
Result<std::string> FormatSlurmTopologyConf(const Topology& topology, const SlurmTreeOptions& options = {});

}  // namespace topolaunch
