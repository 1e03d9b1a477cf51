// Which spare replaces a lost node (`run --max-restarts` with a host pool
// larger than the job).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rankmap/fabric_groups.h"

namespace topolaunch {

/// The spare to put in for `lost`, which was one of `current` (the job's
/// nodes before the loss). In this order of preference: a spare in the lost
/// node's NVLink domain; one on its leaf group (the same set of leaves, so
/// a rail-optimized host keeps every rail); else the one whose plan with
/// the remaining nodes has the fewest ring crossings (domain, then leaf,
/// then spine-group level). Ties go to the first in natural order, so the
/// choice depends only on the sets. Without a fabric (null `groups`), or
/// with spares off the fabric only: the first spare in natural order.
/// nullopt when there is no spare.
std::optional<std::string> ChooseSpare(const FabricGroups* groups, const std::vector<std::string>& current,
                                       const std::string& lost, const std::vector<std::string>& spares);

}  // namespace topolaunch
