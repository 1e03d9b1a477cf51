// The plan (schema topolaunch.plan/1): which hosts run, in which node-rank
// order, and how each local rank is bound to a GPU, NUMA node, CPUs and NIC.
//
// ComputePlan() (src/rankmap/plan_builder.h) makes one from a topology and a
// host list; `plan --json` writes it; `run` reads it back with ParsePlanJson()
// (src/rankmap/plan_json.h) and starts ranks exactly in this order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/fabric.h"

namespace topolaunch {

inline constexpr std::string_view kPlanSchema = "topolaunch.plan/1";

/// Where one local rank runs. Empty/absent fields mean "not bound": the
/// layout was unknown, or the host has no such device.
struct RankBinding {
  int local_rank = 0;
  std::string gpu;               ///< PCI bus id ("0000:07:00.0"); empty for a CPU rank
  std::optional<int> cuda_index; ///< index CUDA gives the GPU (PCI_BUS_ID order, after CUDA_VISIBLE_DEVICES)
  std::optional<int> numa;       ///< NUMA node OS index for CPUs and memory
  std::vector<int> cpus;         ///< PU OS indexes, ascending; empty = unbound
  std::string nic;               ///< RDMA device ("mlx5_0"); empty = none chosen
  bool operator==(const RankBinding&) const = default;
};

/// One host with its node rank.
struct PlanNode {
  std::string host;
  int node_rank = 0;
  std::optional<Guid> leaf;      ///< the leaf of its first cabled HCA (rail 0); absent when unknown
  std::vector<Guid> leaves;      ///< every leaf its HCAs reach, ascending
  std::vector<int> groups;       ///< group index per level above the leaf (groups[0] = spine group / pod)
  std::string nvlink_domain;     ///< its NVLink domain's name ("nvl0"); empty when in none
  int first_rank = 0;
  std::vector<RankBinding> local;
  bool operator==(const PlanNode&) const = default;
};

/// Ring crossings at one level of the fabric (1 = leaf, 2 = spine group or
/// pod, 3 = the groups above, ...) for the plan's order and two references.
struct LevelCrossings {
  int level = 1;
  std::string name;              ///< "leaf", "spine_group", "level3_group", ...
  int crossings = 0;
  int lower_bound = 0;           ///< distinct groups used, 0 when one holds all
  int hostname_order_crossings = 0;
  int given_order_crossings = 0;
  /// The same for NCCL's double binary tree over the node order
  /// (rankmap/nccl_trees.h): edges of both trees between groups.
  int tree_crossings = 0;
  int tree_lower_bound = 0;  ///< 2 * (groups - 1)
  int hostname_order_tree_crossings = 0;
  int given_order_tree_crossings = 0;
  bool operator==(const LevelCrossings&) const = default;
};

struct PlanMetrics {
  int ring_leaf_crossings = 0;
  int ring_leaf_crossings_lower_bound = 0;
  int hostname_order_ring_leaf_crossings = 0;
  int given_order_ring_leaf_crossings = 0;
  std::vector<LevelCrossings> levels;  ///< levels[0] repeats the leaf figures
  /// The same below the leaf for NVLink domains (level 0, "nvlink_domain";
  /// a host in no domain is one of its own), present only when a planned
  /// host is in a domain.
  std::optional<LevelCrossings> nvlink_domain;
  bool operator==(const PlanMetrics&) const = default;
};

/// A host of the pool that was not planned, and why.
struct SkippedHost {
  std::string host;
  std::string reason;            ///< "excluded (--exclude)", "unhealthy: <why>", "not on the fabric"
  bool operator==(const SkippedHost&) const = default;
};

/// Rail k of a rail-optimized fabric: the k-th HCA of every host.
struct Rail {
  int index = 0;
  std::vector<std::string> devices;  ///< RDMA device names seen on this rail
  std::vector<Guid> leaves;          ///< leaves this rail's HCAs reach
  bool operator==(const Rail&) const = default;
};

struct Plan {
  int nproc_per_node = 0;
  int world_size = 0;
  std::vector<PlanNode> nodes;     ///< in node-rank order
  PlanMetrics metrics;
  std::string fabric;              ///< "known" or "none" (no topology: given order)
  std::vector<std::string> unknown_hosts;  ///< planned, but not in the fabric (placed last)
  std::vector<SkippedHost> skipped;
  /// Usable hosts of the pool that --nnodes did not choose, natural order:
  /// idle, and the spares `run --max-restarts` replaces a lost node with.
  std::vector<std::string> idle;
  std::vector<Rail> rails;         ///< empty unless hosts have HCAs on several leaves
  std::vector<std::string> notes;  ///< what a user should know (unbound ranks, unused GPUs, ...)
  bool operator==(const Plan&) const = default;
};

}  // namespace topolaunch
