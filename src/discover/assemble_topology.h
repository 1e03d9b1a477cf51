// The passes of `discover`, independent of where the data comes from.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/sources.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// One host's layout to attach. `host` names the host it belongs to; empty
/// means "the host the layout itself names" (hwloc's HostName), and
/// `fallback_host` is used when the layout names none either.
struct LayoutInput {
  std::string host;
  std::string fallback_host;
  HostLayoutSource* source = nullptr;  ///< not owned
};

/// Runs the passes: load the fabric (when `fabric` is not null), build the
/// topology with `name_map`, load and attach each layout. `generated` is
/// written as given except fabric_source, which the fabric decides ("none"
/// without one). A failing fabric's error is returned at once; every layout
/// is read even after a bad one, and the problems of all bad layouts are
/// returned together (with the first one's code).
Result<Topology> AssembleTopology(FabricSource* fabric, const NodeNameMap& name_map,
                                  const std::vector<LayoutInput>& layouts, Generated generated);

}  // namespace topolaunch
