// Where every host sits in the fabric's switch hierarchy.
//
// Level 1 is the leaf. A host's *leaf group* is the set of leaves its HCAs
// are cabled to: one leaf for an ordinary host, several for a dual-homed or
// rail-optimized one (HCA k on rail leaf k). Above the leaf, a *group at
// level k* (k >= 2) is a connected set of leaves: two leaves are in one group
// when both reach a common switch of level <= k by going up the tree (each
// hop to a switch one level higher), or when one host is cabled to both.
// So in a two-level fat tree every leaf reaches every spine and all leaves
// form one spine group; in a three-level tree the leaves of a pod share the
// pod's spines (level 2) and form one group per pod, while the cores
// (level 3) join all pods. Groups nest: a level-k group is a union of
// level-(k-1) groups, which is what lets the rank order keep each of them
// contiguous. Level 2 is called the "spine group" (the pod, on 3-level trees).
//
// Below the leaf, hosts whose GPUs share a multi-node NVLink fabric form an
// *NVLink domain* (core/nvlink_domains.h), the innermost group. Domains are
// not cabled through the IB tree, so they need not nest in it: a rack may
// be cabled to two leaves. The rank order keeps each domain contiguous
// first and fits domains into the IB order (rank_map.h).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/nvlink_domains.h"
#include "topolaunch/plan.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// One host's place: its leaves and its group at each level above.
struct HostPlace {
  std::vector<Guid> leaves;         ///< distinct, ascending; never empty
  Guid rail0_leaf = 0;              ///< leaf of its first cabled HCA port
  /// Rail k = the host's k-th HCA port in (device, guid, port) order, cabled
  /// or not: its leaf (0 when uncabled) and device ("" when unknown).
  std::vector<Guid> rail_leaves;
  std::vector<std::string> rail_devices;
  int leaf_group = 0;               ///< dense id of `leaves` (hosts with equal leaf sets share it)
  std::vector<int> groups;          ///< group id at levels 2.. (size = FabricGroups::group_levels)
};

/// The hierarchy of a whole topology, computed once.
struct FabricGroups {
  int group_levels = 0;             ///< levels above the leaf that have switches
  int leaf_groups = 0;              ///< number of distinct leaf groups
  std::vector<int> group_counts;    ///< groups per level above the leaf
  /// Hosts with at least one HCA cabled to a switch. Hosts of the topology
  /// that are missing here have no cabled HCA.
  std::unordered_map<std::string, HostPlace> hosts;
  std::unordered_map<Guid, std::string> switch_names;  ///< guid -> name, every switch
  /// The NVLink domains of every host with a layout, on the IB fabric or
  /// not; empty when no layout has GPU fabric info.
  NvlinkDomains nvlink;
};

/// Derives leaf groups and upper-level groups from `topology`'s switch levels
/// and links. Group ids are dense per level, numbered by smallest leaf GUID.
FabricGroups ComputeFabricGroups(const Topology& topology);

/// "leaf", "spine_group", "level3_group", "level4_group", ...
std::string LevelName(int level);

/// The rail structure of `hosts` (names present in `groups`): one Rail per
/// HCA index when some host reaches several leaves, else empty.
std::vector<Rail> DescribeRails(const FabricGroups& groups, const std::vector<std::string>& hosts);

}  // namespace topolaunch
