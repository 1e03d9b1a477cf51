// What `run` says about the node order before anything starts, as pure
// functions of the plan: the pool's hosts the plan left idle, planned hosts
// srun cannot reach, and the NVLink domains that moved the order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch/run_session.h"
#include "topolaunch/plan.h"

namespace topolaunch::run {

/// With --nnodes (`nnodes` set): a note naming the pool's hosts the plan did
/// not choose (they stay idle, or wait as spares with `max_restarts` > 0),
/// then one per host the plan skipped, with why. Empty without --nnodes.
std::vector<std::string> IdleHostNotes(const std::vector<std::string>& pool, std::optional<int> nnodes, int max_restarts,
                                       const Plan& order);

/// The planned nodes that are not in the Slurm allocation `allocation`
/// (empty when it is unknown), in node order.
std::vector<std::string> HostsOutsideAllocation(const std::vector<std::string>& allocation,
                                                const std::vector<SessionNode>& nodes);

/// True when `plan` puts the nodes in another order than `nodes`.
bool ReorderedByDomains(const Plan& plan, const std::vector<SessionNode>& nodes);

/// "nvl0: node[01-18], nvl1: node[19-36]", in plan order.
std::string DomainsOfPlan(const Plan& plan);

}  // namespace topolaunch::run
