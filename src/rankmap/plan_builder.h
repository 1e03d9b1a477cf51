// From a topology and a host list to a whole plan: node choice, rank order,
// bindings, metrics. This is what `topolaunch plan` runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topolaunch/plan.h"
#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

struct PlanRequest {
  std::vector<std::string> hosts;            ///< the pool, in the user's order; empty = every topology host
  std::optional<int> nnodes;                 ///< choose this many from the pool
  std::optional<int> nproc_per_node;         ///< nullopt = GPUs per host, when all hosts agree
  std::vector<std::string> exclude;          ///< never planned
  std::map<std::string, std::string> unhealthy;  ///< host -> reason (ReadUnhealthyHosts)
  bool allow_unknown = false;                ///< hosts off the fabric go last instead of failing
  std::optional<std::vector<int>> cuda_visible_devices;
};

/// Builds the plan. `topology` may be null, or hold no switches (layouts
/// only): then the hosts keep the given order (reported in `notes`) and
/// ranks are bound where a layout is known.
/// Errors: kBadUsage (no hosts, --nnodes larger than the usable pool,
/// --nproc-per-node needed but not given, more ranks than GPUs), kBadInput
/// (duplicate hosts, hosts not on the fabric without allow_unknown, bad
/// CUDA_VISIBLE_DEVICES index). Every host's problems are reported at once.
Result<Plan> ComputePlan(const Topology* topology, const PlanRequest& request);

}  // namespace topolaunch
