#include "support/slurm_cluster.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "support/slurm_harness.h"

namespace topolaunch::testing {

std::string SlurmCluster::Missing() {
  std::string missing;
  for (const char* program : {"slurmctld", "slurmd", "salloc", "sbatch", "srun", "sinfo", "scancel", "squeue"})
    if (FindProgram(program).empty()) missing += std::string(missing.empty() ? "" : ", ") + program;
  if (missing.empty()) return "";
  return missing + " not installed (slurmctld, slurmd, slurm-client: bash tests/install_deps.sh test)";
}

std::string SlurmCluster::GpuDevice(int index) const { return dir_.File(fmt::format("dev/nvidia{}", index)); }

Result<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(const NetnsTestbed& testbed, Confinement confinement) {
  if (std::string missing = Missing(); !missing.empty()) return Error(ErrorCode::kUnavailable, "slurm", missing);
  std::unique_ptr<SlurmCluster> self(new SlurmCluster(testbed, confinement));
  bool cgroups = confinement == Confinement::kCgroups;
  if (cgroups) {
    std::vector<std::string> nodes;
    for (int i = 1; i <= testbed.nodes(); ++i) nodes.push_back(testbed.NodeName(i));
    auto made = NodeCgroups::Create(nodes);
    if (!made.ok()) return made.take_error();
    self->cgroups_.emplace(std::move(made).value());
  }
  const TempDir& dir = self->dir_;
  for (const char* sub : {"state", "spool", "log", "run"}) std::filesystem::create_directories(dir.File(sub));
  self->conf_path_ = dir.File("slurm.conf");
  int n = testbed.nodes();
  for (int i = 1; i <= n; ++i) std::filesystem::create_directories(dir.File("spool/" + testbed.NodeName(i)));
  // Four fake GPUs a node: character devices with NVIDIA's major (195) that
  // no driver answers (opening one gives ENXIO). slurmd only stats them.
  std::filesystem::create_directories(dir.File("dev"));
  for (int g = 0; g < kGpusPerNode; ++g) {
    std::string device = self->GpuDevice(g);
    if (mknod(device.c_str(), S_IFCHR | 0666, makedev(195, g)) != 0)
      return Error(ErrorCode::kUnavailable, "slurm", fmt::format("mknod {}: {}", device, std::strerror(errno)));
  }
  std::ofstream(dir.File("gres.conf")) << fmt::format("NodeName=node[1-{}] Name=gpu File={}/dev/nvidia[0-{}]\n", n,
                                                       dir.path(), kGpusPerNode - 1);
  // ConstrainRAMSpace stays off: slurmd's RealMemory is configured, not
  // this machine's.
  std::ofstream(dir.File("cgroup.conf")) << "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n"
                                            "ConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=no\n";
  std::ofstream(self->conf_path_) << fmt::format(R"(ClusterName=tlnetns
SlurmctldHost={host}(10.200.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
SrunPortRange={srun_ports}
GresTypes=gpu
AuthType=auth/none
CredType=cred/none
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/run/slurmctld.pid
SlurmdPidFile={dir}/run/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType={proctrack}
TaskPlugin={task}
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
SlurmctldDebug=info
SlurmdDebug=info
NodeName=node[1-{n}] NodeAddr=10.200.0.[2-{last}] CPUs=2 RealMemory=1000 Gres=gpu:{gpus} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
)",
                                                 fmt::arg("host", ShortHostName()), fmt::arg("dir", dir.path()),
                                                 fmt::arg("n", n), fmt::arg("last", n + 1),
                                                 fmt::arg("srun_ports", kSrunPortRange), fmt::arg("gpus", kGpusPerNode),
                                                 fmt::arg("proctrack", cgroups ? "proctrack/cgroup" : "proctrack/linuxproc"),
                                                 fmt::arg("task", cgroups ? "task/cgroup,task/affinity" : "task/none"));
  if (Status up = self->Launch(); !up.ok()) return up.take_error();
  return self;
}

Status SlurmCluster::Launch() {
  if (Status up = StartController(); !up.ok()) return up;
  for (int i = 1; i <= testbed_.nodes(); ++i)
    if (Status up = StartSlurmd(i); !up.ok()) return up;
  return WaitIdle();
}

Status SlurmCluster::StartController() {
  auto controller = BackgroundProcess::Start(
      testbed_.InHead({FindProgram("slurmctld"), "-D", "-i", "-f", conf_path_}, {{"SLURM_CONF", conf_path_}}),
      dir_.File("slurmctld.out"));
  if (!controller.ok()) return controller.take_error();
  controller_ = std::move(controller).value();
  if (Status up = controller_->WaitForLog("Running as primary controller", std::chrono::seconds(20)); !up.ok())
    return Error(ErrorCode::kUnavailable, "slurmctld", up.error().Message() + "\n" + Tail(Logs()));
  return Ok{};
}

Status SlurmCluster::StartSlurmd(int i) {
  std::vector<std::string> slurmd = {FindProgram("slurmd"), "-D", "-f", conf_path_, "-N", testbed_.NodeName(i)};
  ProcessSpec spec = testbed_.OnNode(i, cgroups_ ? cgroups_->Wrap(testbed_.NodeName(i), slurmd) : slurmd);
  spec.env = {{"SLURM_CONF", conf_path_}};
  auto daemon = BackgroundProcess::Start(spec, dir_.File(fmt::format("slurmd-{}.out", i)));
  if (!daemon.ok()) return daemon.take_error();
  daemons_.push_back(std::move(daemon).value());
  return Ok{};
}

// Until every node is idle.
Status SlurmCluster::WaitIdle() {
  for (int tries = 0; tries < 120; ++tries) {
    ProcessResult idle = Client({"sinfo", "-h", "-N", "-t", "idle", "-o", "%N"});
    if (std::count(idle.out.begin(), idle.out.end(), '\n') == testbed_.nodes()) return Ok{};
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return Error(ErrorCode::kTimeout, "slurm", "the nodes are not idle after 30 s\n" + Tail(Logs(), 3000));
}

SlurmCluster::~SlurmCluster() {
  daemons_.clear();
  controller_.reset();
}

ProcessSpec SlurmCluster::InHead(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env) const {
  env.insert(env.begin(), {"SLURM_CONF", conf_path_});
  return testbed_.InHead(std::move(argv), std::move(env));
}

ProcessResult SlurmCluster::Client(std::vector<std::string> argv) const {
  ProcessSpec spec = InHead(std::move(argv));
  spec.timeout = std::chrono::seconds(30);
  return RunProcess(spec);
}

// The login node's firewall of a site: from the nodes' network (eth0) it
// admits new TCP connections only to slurmctld and to SrunPortRange, where
// srun listens; what the login node opened itself is answered.
Status SlurmCluster::FirewallTheHead() const {
  std::string nft = FindProgram("nft");
  if (nft.empty()) return Error(ErrorCode::kUnavailable, "nft", "not installed (nftables: bash tests/install_deps.sh test)");
  std::string rules = fmt::format(R"(table inet topolaunch_site {{
  chain input {{
    type filter hook input priority 0; policy accept;
    iifname "eth0" ct state established,related accept
    iifname "eth0" tcp dport {{ 6817, {} }} accept
    iifname "eth0" meta l4proto tcp reject with tcp reset
  }}
}}
)",
                                  kSrunPortRange);
  std::string path = dir_.File("firewall.nft");
  std::ofstream(path) << rules;
  ProcessSpec spec = testbed_.InHead({nft, "-f", path});
  spec.timeout = std::chrono::seconds(10);
  ProcessResult applied = RunProcess(spec);
  if (applied.exit_code != 0) return Error(ErrorCode::kUnavailable, "nft", applied.Describe());
  return Ok{};
}

std::string SlurmCluster::Logs() const {
  std::string logs = "slurmctld: " + ReadFile(dir_.File("log/slurmctld.log")) + ReadFile(dir_.File("slurmctld.out"));
  for (int i = 1; i <= testbed_.nodes(); ++i)
    logs += fmt::format("\nslurmd node{}: {}{}", i, ReadFile(dir_.File(fmt::format("log/slurmd-node{}.log", i))),
                        ReadFile(dir_.File(fmt::format("slurmd-{}.out", i))));
  return logs;
}

}  // namespace topolaunch::testing
