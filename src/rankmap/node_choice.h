// Choosing K hosts out of a larger pool.
#pragma once

#include <string>
#include <vector>

#include "rankmap/fabric_groups.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Picks `count` hosts of `pool` (all present in `groups`) spanning the
/// fewest leaf groups, then -- where one spine group (pod, ...) can hold them
/// with that few leaves -- inside one group at the lowest level possible.
/// When hosts of the pool are in NVLink domains, from the fewest domains
/// first (whole domains where they fit), then the fewest leaf groups.
/// Deterministic whatever the order of `pool`. kBadUsage when the pool is
/// smaller than `count`. The result is in natural order (ComputeRankMap
/// orders it).
Result<std::vector<std::string>> ChooseNodes(const FabricGroups& groups, const std::vector<std::string>& pool,
                                             int count);

}  // namespace topolaunch
