// Real Slurm for tests: scontrol with a private two-line slurm.conf (enough
// for `show hostnames` / `show hostlist`), and a private slurmctld (auth/none,
// its own port, state and log in a temp dir) that reads a topology.conf so
// `scontrol show topology` can tell whether Slurm accepts it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/result.h"

namespace topolaunch::testing {

/// Path of `name` on PATH or in /usr/sbin, /sbin; "" when absent.
std::string FindProgram(const std::string& name);

/// This machine's host name up to its first dot: slurmctld insists that
/// SlurmctldHost is it.
std::string ShortHostName();

/// scontrol with its own slurm.conf (ClusterName, SlurmctldHost only).
class Scontrol {
 public:
  Scontrol();
  /// False when scontrol is not installed (tests then fail).
  bool available() const { return !path_.empty(); }
  /// Runs `scontrol args...` with SLURM_CONF pointing at the private config.
  ProcessResult Run(const std::vector<std::string>& args) const;

 private:
  TempDir dir_;
  std::string path_;
};

/// A slurmctld in the foreground (-D), killed with its process group by the
/// destructor. Nodes all have NodeAddr 127.0.0.1; no slurmd is started.
class SlurmController {
 public:
  /// True when slurmctld and scontrol are installed.
  static bool Available();
  /// Writes slurm.conf (TopologyPlugin=topology/tree, the nodes `node_list`,
  /// a Slurm host list) and `topology_conf`, starts slurmctld and waits until
  /// `scontrol ping` answers. Errors: kUnavailable when slurmctld exits (a
  /// fatal topology.conf error does that) with the log's tail; kTimeout when
  /// it does not answer within 20 s.
  static Result<std::unique_ptr<SlurmController>> Start(const std::string& node_list,
                                                        const std::string& topology_conf);
  ~SlurmController();
  SlurmController(const SlurmController&) = delete;
  SlurmController& operator=(const SlurmController&) = delete;

  /// Runs `scontrol args...` against this controller.
  ProcessResult RunScontrol(const std::vector<std::string>& args) const;
  /// slurmctld's log so far.
  std::string Log() const;
  /// The slurm.conf it reads: set SLURM_CONF to it to run Slurm's clients
  /// (or scripts calling them) against this controller.
  const std::string& conf_path() const { return conf_path_; }

 private:
  SlurmController() = default;
  Status Launch();

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<BackgroundProcess> process_;
  std::string conf_path_;
};

}  // namespace topolaunch::testing
