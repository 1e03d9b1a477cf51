// How the rails of a rail-optimized fabric are joined: the one fact that
// makes NCCL_CROSS_NIC=0 worth setting. Pure logic over the topology.
#pragma once

#include <string>

#include "topolaunch/topology.h"

namespace topolaunch {

struct RailJoin {
  /// Some two rails meet only over less bandwidth than their leaves send up,
  /// or not at all: a ring that changed rails would cross that.
  bool slow = false;
  std::string detail;  ///< one line for the reason
};

/// Rails are the sets of leaves that carry one HCA port name (mlx5_0:1)
/// across all hosts. Two rails that share a spine (a switch above both
/// rails' leaves) meet at full bandwidth. Otherwise each rail's spines must
/// send on up at least what its leaves send to them: the sum of the cable
/// rates from the rail's spines to the level above, against the sum from
/// its leaves to its spines. Unknown rates judge nothing (not slow).
RailJoin JudgeRailJoin(const Topology& topology);

}  // namespace topolaunch
