// `discover` with real sources: picks the fabric and layout sources the
// options name, then runs AssembleTopology.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "discover/ibnetdisc_fabric_source.h"
#include "topolaunch/topology.h"

namespace topolaunch {

struct DiscoverOptions {
  /// "auto" (live when this machine has an HCA, else none), "live", "none",
  /// or a file: an ibnetdiscover dump or a libibnetdisc cache (detected).
  std::string fabric = "auto";
  /// More fabric files, one subnet each (per-rail or per-plane subnets),
  /// merged with `fabric`, which must then be a file too.
  std::vector<std::string> more_fabrics;
  LiveFabricOptions live;
  std::string node_name_map_file;  ///< empty: none
  std::string hwloc_xml;           ///< one host's XML
  std::string layout_dir;          ///< HOST.xml (hwloc) and HOST.json (discover --fabric none) files
  /// Attach this machine's live layout. Ignored when hwloc_xml/layout_dir
  /// are given; the CLI turns it off for fabric files (another cluster).
  bool local_layout = true;
  /// How long the live layout may take (hwloc_layout_source.h): past it,
  /// discovery fails with kTimeout rather than hang on a sick node.
  std::chrono::milliseconds local_layout_timeout{60'000};
  Generated generated;             ///< by and at; fabric_source is filled in
  std::function<void(std::string_view)> note;  ///< progress and notes (stderr)
};

/// Discovers as the options say. Errors name the file or part that failed.
Result<Topology> RunDiscovery(const DiscoverOptions& options);

}  // namespace topolaunch
