// `topolaunch run` after option parsing: the passes of one job, in order
// (hosts → fabric order → preflight on every node → plan with the nodes'
// layouts → env per node → launch or dry-run → supervise → summary). When
// the nodes' own layouts show NVLink domains the topology did not, the
// order changes: nothing has started, so the job is planned again with
// those layouts and the new order gets a preflight of its own.
#pragma once

#include <string>
#include <vector>

namespace topolaunch::cli {

struct RunFlags {
  std::string hosts;
  std::string hostfile;
  std::string launcher = "auto";  ///< auto, ssh, srun, local (see launch/launcher_choice.h)
  std::string topology;
  int nproc_per_node = 0;
  int nnodes = 0;  ///< 0 = every host of the pool
  bool dry_run = false;
  bool no_gpus = false;
  bool allow_unknown = false;
  std::string torchrun = "torchrun";
  std::string python;  ///< "" = the Python torchrun runs under, on each node
  std::string master_addr;
  int master_port = 29500;
  std::vector<std::string> env;
  std::string env_file;
  std::string log_dir;
  std::string ranks_output;       ///< "" = every rank's lines on the terminal
  std::string remote_topolaunch;  ///< "" = this binary's own path
  std::string cwd;                ///< "" = ours (a shared file system), "~" = the login folder on each node
  double grace_s = 3;
  double heartbeat_s = 5;
  double connect_timeout_s = 10;
  double preflight_timeout_s = 60;
  bool accept_new_host_keys = false;
  std::string known_hosts;
  std::string ssh_config;
  std::string templates;
  std::string profile = "auto";
  int max_restarts = 0;        ///< start the job again after a failure, up to this many times
  double restart_delay_s = 3;  ///< wait before each restart (a flapping link settles)
  int min_nnodes = 0;          ///< with no spare left, go on with fewer nodes down to this; 0: never fewer
  std::string failed_hosts;    ///< write the nodes lost to this file, one per line
  bool audit = false;          ///< the preflight runs `audit --local`'s node checks on every node
  std::string audit_sysfs_root;  ///< tests: where those read sysfs ("" = /)
};

/// Runs the job; `script_and_args` is SCRIPT followed by its arguments,
/// exactly as given. With --max-restarts, a failed attempt is followed by
/// another (run_job.cc says on which nodes). Returns the exit status: 0
/// every node succeeded, 1 the job failed, 2 bad usage or input, 3
/// preflight failed (nothing started), 130 interrupted.
int RunJob(const RunFlags& flags, const std::vector<std::string>& script_and_args);

}  // namespace topolaunch::cli
