// A real Slurm cluster on a NetnsTestbed: slurmctld in the head namespace
// (the login node, 10.200.0.1), one slurmd on every node, each in its node's
// namespace with its node's host name (see TESTBED.md). auth/none and
// cred/none (Debian's Slurm 22.05 still has them), so no munged is needed;
// fixed ports, as each namespace has its own network. State, spool and
// logs live in a temporary directory; the destructor kills the daemons
// with their process groups (and slurmd's step daemons with the node's
// namespace, when the testbed goes).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/netns_testbed.h"
#include "support/node_cgroups.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/result.h"

namespace topolaunch::testing {

class SlurmCluster {
 public:
  /// The programs it needs and that are missing ("" when none is): a test
  /// fails with this, naming the package to install.
  static std::string Missing();
  /// How its nodes confine jobs.
  enum class Confinement {
    /// As GPU sites run Slurm: task/cgroup (+ task/affinity) and
    /// proctrack/cgroup on cgroup v1, ConstrainCores and ConstrainDevices
    /// (a job's step sees only the GPUs and CPUs it was given); each node
    /// its own cgroup hierarchies (NodeCgroups).
    kCgroups,
    /// task/none, proctrack/linuxproc: what a step may touch is not
    /// enforced.
    kNone,
  };
  /// Why kCgroups cannot be had on this machine, "" when it can.
  static std::string CgroupsUnavailable() { return NodeCgroups::Unavailable(); }
  /// Writes slurm.conf (node1..N, CPUs=2 and four GPUs with
  /// config_overrides, KillWait=2, SrunPortRange), gres.conf and
  /// cgroup.conf, starts slurmctld and every slurmd and waits until every
  /// node is idle. Errors: kUnavailable or kTimeout with the daemons' log
  /// tails.
  static Result<std::unique_ptr<SlurmCluster>> Start(const NetnsTestbed& testbed,
                                                     Confinement confinement = Confinement::kCgroups);
  Confinement confinement() const { return confinement_; }
  /// The fake GPU devices of every node (dev/nvidia0..), which a step may
  /// open (ENXIO: no driver) only where its cgroup allows (else EPERM).
  std::string GpuDevice(int index) const;
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  /// `argv` in the head namespace with SLURM_CONF set (and the testbed's
  /// HOME), `env` on top: salloc, sbatch, squeue, scancel.
  ProcessSpec InHead(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {}) const;
  /// Runs a Slurm client to completion in the head namespace (30 s limit).
  ProcessResult Client(std::vector<std::string> argv) const;
  const std::string& conf_path() const { return conf_path_; }
  /// slurmctld's and every slurmd's log, for failure messages.
  std::string Logs() const;
  /// slurm.conf's SrunPortRange.
  static constexpr const char* kSrunPortRange = "60001-60200";
  /// GPU GRES of every node (gres.conf: fake character devices, NVIDIA's
  /// major 195, that no driver answers).
  static constexpr int kGpusPerNode = 4;
  /// A site's firewall on the login node (the head namespace): from the
  /// nodes, new TCP connections only to slurmctld's port and
  /// SrunPortRange; others are reset. Errors: kUnavailable (no nft).
  Status FirewallTheHead() const;

 private:
  SlurmCluster(const NetnsTestbed& testbed, Confinement confinement) : testbed_(testbed), confinement_(confinement) {}
  Status Launch();
  Status StartController();
  Status StartSlurmd(int i);
  Status WaitIdle();

  const NetnsTestbed& testbed_;
  Confinement confinement_;
  TempDir dir_;
  std::optional<NodeCgroups> cgroups_;  ///< kCgroups: destroyed after the daemons
  std::string conf_path_;
  std::unique_ptr<BackgroundProcess> controller_;
  std::vector<std::unique_ptr<BackgroundProcess>> daemons_;
};

}  // namespace topolaunch::testing
