// Several fabrics as one: per-rail or per-plane InfiniBand subnets, each
// walked or dumped on its own (`discover --fabric rail0.ibnet --fabric
// rail1.ibnet`). Pure logic.
#pragma once

#include <string>
#include <vector>

#include "topolaunch/fabric.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// One fabric holding every node of `fabrics` (named by `names`, for
/// errors). A node GUID in several (an HCA with one port on each subnet)
/// is one node with the ports of all; a port both list must be the same
/// cable. `source` and notes come from all, in order. Errors (kBadInput,
/// every one): a GUID that is a switch in one and a CA in another, or a port
/// that two fabrics cable differently, naming both files.
Result<Fabric> MergeFabrics(std::vector<Fabric> fabrics, const std::vector<std::string>& names);

}  // namespace topolaunch
