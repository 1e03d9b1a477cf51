// The switch tree Slurm's topology/tree plugin is given: which switches are
// leaves, which hosts hang under them, what is above, merged and rooted the
// way Slurm schedules best (see slurm_topology_tree.cc). Pure logic.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

struct SlurmTreeOptions {
  /// Only these hosts are written (`--slurm-nodes`, the NodeName list of
  /// slurm.conf); absent: every host with a name.
  std::optional<std::set<std::string>> nodes;
};

/// One `SwitchName=` line.
struct SlurmSwitchLine {
  std::string name;
  int level = 1;                     ///< 1 = leaf (Nodes=), above: Switches=
  std::vector<std::string> members;  ///< hosts or child switch names, natural order
  size_t stands_for = 1;             ///< fabric switches merged into this line
  bool added_root = false;           ///< not a fabric switch: joins the tops
  bool operator==(const SlurmSwitchLine&) const = default;
};

struct SlurmTree {
  std::vector<SlurmSwitchLine> lines;  ///< by level, then natural name order
  size_t hosts = 0;                    ///< hosts written
  size_t multi_homed = 0;              ///< of those, cabled to several leaves
  size_t merged_away = 0;              ///< upper switches folded into an identical line
  /// Hosts left out because they hang only on switches above the leaves
  /// (storage or service hosts on a spine).
  std::vector<std::string> above_leaves;
  size_t not_selected = 0;                    ///< cabled hosts outside `nodes`
  std::vector<std::string> selected_missing;  ///< in `nodes`, not a cabled host of the fabric
};

/// Builds the tree. Errors (kBadInput): a host name Slurm could not read;
/// nothing to write (no leaf switch with a written host).
Result<SlurmTree> BuildSlurmTree(const Topology& topology, const SlurmTreeOptions& options);

}  // namespace topolaunch
