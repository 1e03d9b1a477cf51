#include "support/slurm_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace topolaunch::testing {

std::string ShortHostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string host(name);
  return host.substr(0, host.find('.'));
}

namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string UserName() {
  const passwd* pw = getpwuid(geteuid());
  return pw ? pw->pw_name : "root";
}

// A TCP port nobody listens on right now (the kernel's pick for port 0).
int FreeLocalPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace

std::string FindProgram(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Scontrol::Scontrol() : path_(FindProgram("scontrol")) {
  WriteFile(dir_.File("slurm.conf"), "ClusterName=tlhostlist\nSlurmctldHost=localhost\n");
}

ProcessResult Scontrol::Run(const std::vector<std::string>& args) const {
  ProcessSpec spec;
  spec.argv = {path_};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"SLURM_CONF", dir_.File("slurm.conf")}};
  spec.timeout = std::chrono::seconds(30);
  return RunProcess(spec);
}

bool SlurmController::Available() { return !FindProgram("slurmctld").empty() && !FindProgram("scontrol").empty(); }

Result<std::unique_ptr<SlurmController>> SlurmController::Start(const std::string& node_list,
                                                                const std::string& topology_conf) {
  std::unique_ptr<SlurmController> self(new SlurmController);
  self->dir_ = std::make_unique<TempDir>();
  const TempDir& dir = *self->dir_;
  std::filesystem::create_directories(dir.File("state"));
  WriteFile(dir.File("topology.conf"), topology_conf);
  self->conf_path_ = dir.File("slurm.conf");
  Status launched = Error(ErrorCode::kInternal, "slurmctld", "not started");
  // The free port can be taken between our probe and slurmctld's bind: retry.
  for (int attempt = 0; attempt < 3 && !launched.ok(); ++attempt) {
    WriteFile(self->conf_path_, fmt::format(R"(ClusterName=tltopo
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={port}
SlurmdPort={slurmd_port}
SlurmUser={user}
AuthType=auth/none
CredType=cred/none
StateSaveLocation={dir}/state
SlurmctldPidFile={dir}/slurmctld.pid
SlurmctldLogFile={dir}/slurmctld.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
TopologyPlugin=topology/tree
SlurmctldDebug=info
NodeName={nodes} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES
)",
                                            fmt::arg("host", ShortHostName()), fmt::arg("port", FreeLocalPort()),
                                            fmt::arg("slurmd_port", FreeLocalPort()), fmt::arg("user", UserName()),
                                            fmt::arg("dir", dir.path()), fmt::arg("nodes", node_list)));
    launched = self->Launch();
    bool port_taken = !launched.ok() && self->Log().find("Address already in use") != std::string::npos;
    if (!port_taken) break;
  }
  if (!launched.ok()) return launched.take_error();
  return self;
}

Status SlurmController::Launch() {
  ProcessSpec spec;
  spec.argv = {FindProgram("slurmctld"), "-D", "-i", "-f", conf_path_};
  spec.env = {{"SLURM_CONF", conf_path_}};
  Result<std::unique_ptr<BackgroundProcess>> started = BackgroundProcess::Start(spec, dir_->File("stderr.log"));
  if (!started.ok()) return started.take_error();
  process_ = std::move(started.value());
  if (Status up = process_->WaitForLog("Running as primary controller", std::chrono::seconds(20)); !up.ok())
    return up;
  // The RPC listener starts right after that line; give it a moment.
  for (int i = 0; i < 50; ++i) {
    if (RunScontrol({"ping"}).out.find("is UP") != std::string::npos) return Ok{};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Error(ErrorCode::kTimeout, "slurmctld", "does not answer scontrol ping; log: " + Tail(Log()));
}

SlurmController::~SlurmController() = default;  // process_ kills slurmctld before dir_ goes

ProcessResult SlurmController::RunScontrol(const std::vector<std::string>& args) const {
  ProcessSpec spec;
  spec.argv = {FindProgram("scontrol")};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"SLURM_CONF", conf_path_}};
  spec.timeout = std::chrono::seconds(30);
  return RunProcess(spec);
}

std::string SlurmController::Log() const {
  return ReadWholeFile(dir_->File("stderr.log")) + ReadWholeFile(dir_->File("slurmctld.log"));
}

}  // namespace topolaunch::testing
