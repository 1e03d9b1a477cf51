// plan.json (schema topolaunch.plan/1): writing, and validated reading for
// `topolaunch run`.
//
// Shape (SPEC.md's keys, then extras):
//   {"schema", "nproc_per_node", "world_size",
//    "nodes": [{"host", "node_rank", "leaf": "0x..."|null, "first_rank",
//               "local": [{"local_rank", "gpu": "0000:07:00.0"|null, "numa": 0|null,
//                          "cpus": "0-15"|null, "nic": "mlx5_0"|null, "cuda_index": 0|null}],
//               "leaves": ["0x..."], "spine_group": 0|null, "groups": [0, 0]}],
//    "metrics": {"ring_leaf_crossings", "ring_leaf_crossings_lower_bound",
//                "hostname_order_ring_leaf_crossings", "given_order_ring_leaf_crossings",
//                "levels": [{"level", "name", "crossings", "lower_bound",
//                            "hostname_order_crossings", "given_order_crossings",
//                            "tree_crossings", "tree_lower_bound", "hostname_order_tree_crossings",
//                            "given_order_tree_crossings"}]},
//    "fabric": "known"|"none", "env": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
//    "unknown_hosts": [..], "skipped": [{"host", "reason"}], "idle": [..] (with --nnodes, when any),
//    "rails": [{"rail", "devices": [..], "leaves": ["0x..."]}], "notes": [..]}
#pragma once

#include <string>
#include <string_view>

#include "topolaunch/plan.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// The plan as two-space-indented JSON ending in a newline; deterministic.
std::string FormatPlanJson(const Plan& plan);

/// Reads and validates a plan: the schema, every field's type, and that the
/// parts agree (node_rank i at index i, first_rank = node_rank x
/// nproc_per_node, nproc_per_node local ranks numbered 0.., world_size,
/// no host twice). Extra keys are ignored; the extras above are optional.
/// Every problem at once, named `file_name: $.json.path`; kBadInput.
Result<Plan> ParsePlanJson(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
