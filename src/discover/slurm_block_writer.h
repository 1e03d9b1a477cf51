// Slurm topology.conf for topology/block (`discover --format slurm-block`):
// one block per NVLink domain, the tree form's counterpart for NVL72-class
// racks, where the unit a job must not straddle is the NVLink domain.
#pragma once

#include <string>

#include "discover/slurm_topology_tree.h"
#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// A comment header (what was written, what was left out, why these
/// BlockSizes), then `BlockName=<domain> Nodes=<compressed hostlist>` per
/// NVLink domain, in the InfiniBand fabric's order (Slurm joins neighbouring
/// blocks into the larger sizes), then `BlockSizes=`. `options.nodes`
/// (--slurm-nodes) keeps only those hosts. Errors (kBadInput): no NVLink
/// domain among the hosts written (the message points at --format slurm).
Result<std::string> FormatSlurmBlockConf(const Topology& topology, const SlurmTreeOptions& options = {});

/// The BlockSizes for blocks of these node counts: the smallest block is
/// the base (Slurm 24.05 requires every block to hold at least the base),
/// then each doubling that the number of blocks reaches (as NVIDIA's
/// topograph does). Empty for no blocks.
std::vector<size_t> ChooseBlockSizes(const std::vector<size_t>& block_nodes);

}  // namespace topolaunch
