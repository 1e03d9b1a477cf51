// cgroup v1 hierarchies of its own for every slurmd of a test cluster, as
// each node of a real cluster has: Slurm's cgroup/v1 plugin builds
// <controller>/slurm/uid_U/job_J/step_S on every node, and job J runs on
// several nodes, which here share one kernel. So each node gets a folder
// `topolaunch-test-PID-NODE` in each controller's hierarchy (cpuset with
// the machine's CPUs and memory nodes), and its slurmd starts in a mount
// namespace where that folder is bind-mounted over the controller's mount
// point: /sys/fs/cgroup/cpuset there is the node's own.
//
// The destructor kills what is still in those cgroups (step daemons,
// tasks) and removes them, deepest first; Create also removes the empty
// folders of test processes that died without doing so.
#pragma once

#include <string>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch::testing {

class NodeCgroups {
 public:
  /// The controllers Slurm's task/cgroup and proctrack/cgroup use.
  static const std::vector<std::string>& Controllers();
  /// Why cgroup v1 cannot be used here ("" when it can): a controller not
  /// mounted as cgroup v1 under /sys/fs/cgroup (a cgroup v2-only machine).
  static std::string Unavailable();
  /// One folder a controller for every node in `nodes`.
  /// Errors: kUnavailable naming the folder that could not be made.
  static Result<NodeCgroups> Create(const std::vector<std::string>& nodes);
  NodeCgroups(NodeCgroups&& other) noexcept : folder_names_(std::move(other.folder_names_)) { other.folder_names_.clear(); }
  NodeCgroups& operator=(NodeCgroups&&) = delete;
  NodeCgroups(const NodeCgroups&) = delete;
  ~NodeCgroups();

  /// argv that bind-mounts node `node`'s folders over the controllers'
  /// mount points, then execs `argv` (to run in the node's own mount
  /// namespace: NetnsTestbed::OnNode).
  std::vector<std::string> Wrap(const std::string& node, const std::vector<std::string>& argv) const;

 private:
  explicit NodeCgroups(std::vector<std::string> folder_names) : folder_names_(std::move(folder_names)) {}
  std::string FolderName(const std::string& node) const;

  std::vector<std::string> folder_names_;  ///< one a node, in every controller
};

}  // namespace topolaunch::testing
