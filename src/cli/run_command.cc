// `topolaunch run`: start torchrun on every node (srun, SSH), in the planned
// order, each worker bound; stop them all when one fails or on Ctrl-C. The
// options are parsed here; the job itself is src/run/ (run_job.h).
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "run/run_job.h"
#include "run/script_words.h"

namespace topolaunch::cli {

namespace {

constexpr const char* kRunFooter = R"EX(Options go before SCRIPT; SCRIPT and everything after it are passed to the
script byte for byte. An unknown option before SCRIPT is refused (exit 2), never taken for
the script; only python3's own flags may stand just before it, as on python3's command line:
  topolaunch run --nnodes 2 -u train.py        topolaunch run -m torch.utils.collect_env
torchrun's and srun's spellings work too: --nproc_per_node, --max_restarts, --master_addr,
--master_port, --log_dir; -N (--nnodes), -w/--nodelist (--hosts).

Examples:
  topolaunch run train.py --lr 3e-4                      # this machine alone, one rank per GPU
  topolaunch run --hosts 'node[01-64]' train.py --lr 3e-4
  topolaunch run --hostfile hosts --topology topology.json --nproc-per-node 8 --dry-run train.py
  topolaunch run --hosts 'node[1-4]' --nproc-per-node 2 --no-gpus \
      --torchrun '/usr/bin/torchrun --redirects 9:0 --tee 9:0' --env HF_TOKEN train.py
  sbatch -N 16 --wrap 'topolaunch run train.py'          # srun: every node's agent in one step of the job
  salloc -N 4 topolaunch run --launcher ssh train.py     # the allocation's nodes, over SSH

Launcher (--launcher auto): srun inside a Slurm allocation (SLURM_JOB_ID set, srun on PATH),
ssh with --hosts/--hostfile outside one, else this machine alone. Under srun every node's
agent is one task of a single step of the job (srun --nodes=N --nodelist=HOSTS --overlap), so
accounting, cgroups, scancel and the time limit reach every worker; the agents connect back to
`run` over TCP (to the address srun came from, or --connect-back-address), each proving
itself with a key bound to its node name, and each node's launch message travels on its own
encrypted connection, never a command line. The first note says what was chosen.

Before anything starts, every node is checked in parallel (reachable, torchrun, Python,
numactl, GPU count, the master port free on the first node, clocks within 1 s, the
working folder and the script in it); one bad node and nothing starts anywhere. Each node then runs
  TORCHRUN --nnodes=N --nproc_per_node=K --node_rank=R --master_addr=A --master_port=P
           --rdzv_backend=static --no_python topolaunch bind -- PYTHON SCRIPT ARGS...
with its NCCL settings and forwarded variables sent over the SSH channel or the agent's connection (never on a
command line). Each rank's stdout and stderr reach its node's agent on their own
connection, so lines arrive whole, each labelled like srun --label: `node1[0] 3: text`
is rank 3 on node rank 0, `node1[0]: text` is torchrun's own. A line longer than
64 KiB arrives in marked pieces. When one node fails, or on Ctrl-C / SIGTERM, every node's processes are
stopped (SIGTERM, SIGKILL after --grace).

Restarts (--max-restarts N): after a failure every node is stopped as above, then the job
starts again after --restart-delay. A node that was lost (its connection dropped, its agent
killed, its preflight failed) is dropped for the rest of the run and replaced by a spare from
the pool (--hosts/--hostfile/the allocation beyond --nnodes): one in its NVLink domain or on its
leaf first, else the one that keeps the ring's switch crossings lowest; the plan is made again.
A worker failing on healthy nodes restarts on the same nodes. With --audit every preflight also
runs the node checks of `audit --local`, so a spare with a bad link is passed over. Every
attempt is listed at the end.
  topolaunch run --hosts 'node[1-5]' --nnodes 4 --max-restarts 3 --audit --failed-hosts lost.txt train.py

Exit status: 0 every node succeeded, 1 the job failed, 2 bad usage or input,
3 preflight failed (nothing started), 130 interrupted.)EX";

// Where the job runs: the launcher, the pool, how many nodes and ranks, the fabric.
void AddPoolOptions(CLI::App* cmd, run::RunOptions& options) {
  cmd->add_option("--launcher", options.launcher,
                  "how the nodes are reached: auto (srun inside a Slurm allocation, else ssh with hosts, else local), "
                  "ssh, srun, local")
      ->check(CLI::IsMember({"auto", "ssh", "srun", "local"}))
      ->capture_default_str();
  auto* hosts = cmd->add_option("--hosts,-w,--nodelist", options.hosts, "Slurm host list, e.g. 'node[01-64]' (default: SLURM_JOB_NODELIST, else this machine)");
  auto* hostfile = cmd->add_option("--hostfile", options.hostfile, "host file: 'host slots=N' per line, '#' comments");
  hosts->excludes(hostfile);
  cmd->add_option("--nproc-per-node,--nproc_per_node", options.nproc_per_node,
                  "ranks per node (default: the hostfile's slots, else one per GPU, the count every node reports in the "
                  "preflight; 1 with --no-gpus)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--nnodes,-N", options.nnodes,
                  "use this many hosts of the pool, chosen by the fabric as `plan --nnodes` does (fewest leaves, then "
                  "fewest spine groups); the rest stay idle and are named")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--topology", options.topology, "topology.json from `topolaunch discover` (default: the live fabric when this machine has an HCA)");
}

// What each node runs, with what, and where its output goes.
void AddWorkerOptions(CLI::App* cmd, run::RunOptions& options) {
  cmd->add_flag("--dry-run", options.dry_run, "run the preflight, print each node's exact command and environment (secrets masked), start nothing");
  cmd->add_option("--torchrun", options.torchrun, "torchrun command on the nodes, e.g. '/opt/venv/bin/torchrun' or 'torchrun --redirects 9:0 --tee 9:0'")
      ->capture_default_str();
  cmd->add_option("--python", options.python,
                  "Python interpreter on the nodes (default: the one torchrun itself runs under, from its #! line, "
                  "as plain torchrun does)");
  cmd->add_option("--master-addr,--master_addr", options.master_addr, "address the nodes reach rank 0 at (default: the first node's HostName in ~/.ssh/config, else its name; the preflight checks every node resolves it)");
  cmd->add_option("--master-port,--master_port", options.master_port, "rendezvous port on the first node; checked free")->check(CLI::Range(1, 65535))->capture_default_str();
  cmd->add_option("--env", options.env, "forward NAME (its value here) or set NAME=VALUE on every node; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--env-file", options.env_file, "NAME=VALUE lines to set on every node");
  cmd->add_option("--log-dir,--log_dir", options.log_dir,
                  "write each rank's output to DIR/RANK.log and each node's own (torchrun's) to DIR/HOST.log, "
                  "instead of labelled lines");
  cmd->add_option("--ranks-output", options.ranks_output,
                  "show only these ranks' lines, e.g. 0 or 0,3 or 0-7 (global ranks; with --log-dir, shown on top of the files)");
  cmd->add_flag("--no-gpus", options.no_gpus, "CPU-only job (gloo): nodes need no GPUs");
  cmd->add_flag("--allow-unknown", options.allow_unknown, "hosts not on the fabric go last instead of failing");
}

// Reaching the nodes and stopping them.
void AddConnectionOptions(CLI::App* cmd, run::RunOptions& options) {
  cmd->add_option("--grace", options.grace_s, "seconds between SIGTERM and SIGKILL when stopping nodes")->check(CLI::Range(0.0, 600.0))->capture_default_str();
  cmd->add_option("--heartbeat", options.heartbeat_s,
                  "seconds between heartbeats to the agents; an agent that misses three (the login node cut off) stops its node; 0: off")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--connect-timeout", options.connect_timeout_s, "seconds to connect and log in to a node")->check(CLI::Range(0.1, 600.0))->capture_default_str();
  cmd->add_option("--connect-back-address", options.connect_back_address,
                  "srun: the numeric address of this machine the agents connect back to, and the only one listened on "
                  "(default: each agent uses the address srun came from, SLURM_LAUNCH_NODE_IPADDR)");
  cmd->add_option("--preflight-timeout", options.preflight_timeout_s, "seconds for every node's preflight answer")->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  cmd->add_flag("--accept-new-host-keys", options.accept_new_host_keys, "add unknown host keys to known_hosts (OpenSSH's accept-new); changed keys are still refused");
  cmd->add_option("--known-hosts", options.known_hosts, "known_hosts file (default: ~/.ssh/known_hosts)");
  cmd->add_option("--ssh-config", options.ssh_config, "ssh client config (default: ~/.ssh/config)");
  cmd->add_option("--remote-topolaunch", options.remote_topolaunch, "path of topolaunch on the nodes (default: this binary's path)");
  cmd->add_option("--cwd", options.cwd, "working folder on the nodes (default: this one, as on a shared file system; '~': the login folder)");
}

// After a failure: restarts, spares, the nodes lost; the preflight's audit.
void AddRestartOptions(CLI::App* cmd, run::RunOptions& options) {
  cmd->add_option("--max-restarts,--max_restarts", options.max_restarts,
                  "after a failure, start the job again up to N times: a lost node is replaced by a spare of the pool "
                  "(same NVLink domain or leaf first), a failed worker restarts on the same nodes; workers see "
                  "TOPOLAUNCH_RESTART_COUNT")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--restart-delay", options.restart_delay_s, "seconds to wait before each restart (a flapping link settles)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--min-nnodes", options.min_nnodes,
                  "with no spare left for a lost node, go on with fewer nodes down to this many (the world size "
                  "changes); default: never fewer")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--failed-hosts", options.failed_hosts, "write the nodes lost during the run to FILE, one per line (to drain them)");
  cmd->add_flag("--audit", options.audit,
                "the preflight also runs the node checks of `audit --local` (HCA ports, GPU PCIe links, NUMA memory, "
                "NVLink fabric) on every node: a node with an error finding is not ready (with --max-restarts, a "
                "spare's failing check makes it lost in turn)");
  cmd->add_option("--audit-sysfs-root", options.audit_sysfs_root, "tests: the sysfs tree --audit reads on every node")
      ->group("");
}

// The env profile every node's NCCL settings start from.
void AddProfileOptions(CLI::App* cmd, run::RunOptions& options) {
  cmd->add_option("--templates", options.templates, "folder of env profile templates (see `topolaunch env`)");
  cmd->add_option("--profile", options.profile, "env profile: auto, infiniband, roce, tcp")
      ->check(CLI::IsMember({"auto", "infiniband", "roce", "tcp"}))
      ->capture_default_str();
}

// Every spelling of every option, for "did you mean".
std::vector<std::string> OptionSpellings(const CLI::App& cmd) {
  std::vector<std::string> spellings;
  for (const CLI::Option* option : cmd.get_options()) {
    for (const std::string& name : option->get_lnames()) spellings.push_back("--" + name);
    for (const std::string& name : option->get_snames()) spellings.push_back("-" + name);
  }
  return spellings;
}

}  // namespace

void AddRunCommand(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<run::RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Start torchrun on every node (srun inside Slurm, else SSH), in the planned rank order, each rank bound");
  cmd->prefix_command();  // SCRIPT and everything after it reach the script untouched
  cmd->footer(kRunFooter);
  AddPoolOptions(cmd, *options);
  AddWorkerOptions(cmd, *options);
  AddConnectionOptions(cmd, *options);
  AddRestartOptions(cmd, *options);
  AddProfileOptions(cmd, *options);
  cmd->callback([cmd, options, &exit_status] {
    std::vector<std::string> script_and_args = cmd->remaining();
    if (Status words = run::CheckScriptWords(script_and_args, OptionSpellings(*cmd)); !words.ok()) {
      exit_status = ReportError(words.error());
      return;
    }
    run::RunContext context{{VersionString(), NowRfc3339(), ""}, DefaultTemplatesDir(), ExitAfterTimeout};
    exit_status = run::RunJob(*options, context, script_and_args);
  });
}

}  // namespace topolaunch::cli
