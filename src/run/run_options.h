// What `topolaunch run` is asked: its options as the CLI parsed them
// (cli/run_command.cc, whose --help says what each means), and what it takes
// from the program around it (RunContext).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch::run {

/// One field per option of `run`, with its default.
struct RunOptions {
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
  std::string connect_back_address;  ///< srun: the one address agents connect back to ("" = the one srun came from)
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

/// What the program around `run` supplies.
struct RunContext {
  Generated generated;            ///< who and when, for a topology walked live
  std::string default_templates;  ///< env profiles without --templates ("": the built-in ones)
  /// A live walk past its deadline: report the error and end the process
  /// (LiveFabricOptions::past_deadline); before any node was touched.
  std::function<void(const Error&)> past_deadline;
};

}  // namespace topolaunch::run
