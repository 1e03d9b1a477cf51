// A worker's binding within what its step may use: pure.
//
// Bindings are planned from the whole node (the preflight reads hwloc with
// disallowed CPUs included, so a Slurm cgroup does not change what a node
// looks like), but a worker runs inside its step's cgroup: under
// ConstrainCores a job holding 4 of a node's 64 CPUs gets a cpuset of 4,
// and `numactl --physcpubind` of CPUs outside it fails ("<16-31> is
// invalid"), as does `--membind` of a memory node outside cpuset.mems.
// So `bind` keeps of each binding the part the cgroup allows, and where
// none of it is allowed leaves that part unbound (the worker runs on what
// the step has), and says so once a node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/binding_spec.h"

namespace topolaunch {

/// The CPUs and memory nodes this process may use; an empty list is
/// unknown and narrows nothing.
struct AllowedPlaces {
  std::vector<int> cpus;
  std::vector<int> mems;
};

/// From /proc/self/status (Cpus_allowed_list, Mems_allowed_list); a line
/// missing or unreadable leaves that list empty.
AllowedPlaces ParseAllowedPlaces(std::string_view proc_status);

/// Every entry within `allowed`, and one line saying what changed ("" when
/// nothing did).
struct NarrowedBindings {
  std::vector<BindingEntry> entries;
  std::string note;
};
NarrowedBindings WithinAllowed(const std::vector<BindingEntry>& entries, const AllowedPlaces& allowed);

}  // namespace topolaunch
