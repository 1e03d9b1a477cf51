// The node side of the preflight: each fact through the adapter that
// already reads it (hwloc layout source, RDMA sysfs reader, kernel route
// lookup), plus a PATH search and a trial bind for the master port.
#include "launch/preflight_probe.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "audit/audit_node_checks.h"
#include "audit/audit_sysfs_reader.h"
#include "discover/hwloc_layout_source.h"
#include "discover/local_host.h"
#include "env/rdma_sysfs.h"
#include "env/route_lookup.h"
#include "launch/program_search.h"
#include "launch/script_interpreter.h"

namespace topolaunch {

namespace {

// A trial bind, as torchrun's store will do: SO_REUSEADDR so that a port
// in TIME_WAIT from the previous run counts as free.
void CheckPort(int port, PreflightReply& reply) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    reply.port_free = false;
    reply.port_problem = strerror(errno);
    return;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    reply.port_free = true;
  } else {
    reply.port_free = false;
    reply.port_problem = errno == EADDRINUSE ? "in use" : strerror(errno);
  }
  close(fd);
}

// The job's folder and the files it reads there (relative names from it).
void CheckFolderAndFiles(const PreflightRequest& request, PreflightReply& reply) {
  struct stat info;
  if (!request.cwd.empty()) {
    if (stat(request.cwd.c_str(), &info) != 0) reply.cwd_problem = fmt::format("{}: {}", request.cwd, strerror(errno));
    else if (!S_ISDIR(info.st_mode)) reply.cwd_problem = fmt::format("{}: not a folder", request.cwd);
    else if (access(request.cwd.c_str(), X_OK) != 0) reply.cwd_problem = fmt::format("{}: {}", request.cwd, strerror(errno));
    if (!reply.cwd_problem.empty()) return;
  }
  for (const std::string& file : request.files) {
    std::string path = file.starts_with('/') || request.cwd.empty() ? file : request.cwd + "/" + file;
    if (access(path.c_str(), R_OK) != 0) reply.file_problems.push_back(fmt::format("{}: {}", path, strerror(errno)));
    else if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
      reply.file_problems.push_back(fmt::format("{}: a folder, not a script", path));
  }
}

// The Python the program (torchrun) runs under, from its first bytes. A
// program not found is already a problem of its own (the programs list).
void FindInterpreter(const std::string& program, PreflightReply& reply) {
  std::string path = FindProgram(program);
  if (path.empty()) return;
  std::ifstream file(path, std::ios::binary);
  std::string head(4096, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  Result<std::string> interpreter = InterpreterOf(path, head, FindProgram);
  if (!interpreter.ok()) {
    reply.interpreter_problem = interpreter.error().Message();
    return;
  }
  if (access(interpreter->c_str(), X_OK) != 0) {
    reply.interpreter_problem = fmt::format("{}: runs under {}: {}", path, *interpreter, strerror(errno));
    return;
  }
  reply.interpreter = std::move(interpreter).value();
}

// The node checks of `audit --local` (HCA ports, GPU PCIe links, NUMA
// memory, the NVLink fabric): the findings at error or worse, most severe
// first. A check that cannot run here (no HCA) is not a finding.
std::vector<std::string> NodeCheckErrors(const std::string& root, const std::string& host) {
  NodeFacts facts = ReadNodeFacts(root, host);
  AuditReport report;
  CheckNode(facts, NodeCheckOptions{}, report);
  NormalizeReport(report);
  std::vector<std::string> errors;
  for (const Finding& f : report.findings)
    if (f.severity >= Severity::kError && errors.size() < kMaxAuditErrors)
      errors.push_back(fmt::format("{}: {}", f.check, f.message));
  return errors;
}

}  // namespace

PreflightReply GatherPreflight(const PreflightRequest& request) {
  PreflightReply reply;
  reply.hostname = LocalShortHostName();
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::getline(boot_id, reply.boot_id);
  for (const std::string& name : request.programs) reply.programs.push_back({name, FindProgram(name)});
  if (request.master_port > 0) CheckPort(request.master_port, reply);
  CheckFolderAndFiles(request, reply);
  if (!request.interpreter_of.empty()) FindInterpreter(request.interpreter_of, reply);
  if (request.want_layout) {
    Result<HostLayout> layout = HwlocLayoutSource::Live().LoadLayout();
    if (layout.ok()) {
      reply.gpus = static_cast<int>(layout->gpus.size());
      reply.layout = std::move(layout).value();
    } else {
      reply.layout_problem = layout.error().Message();
    }
  }
  Result<std::vector<RdmaPort>> ports = ReadRdmaPorts(kSysClassInfiniband);
  if (ports.ok()) reply.rdma_ports = std::move(ports).value();
  if (!request.master_addr.empty()) {
    std::unique_ptr<RouteLookup> routes = MakeKernelRouteLookup();
    Result<SocketRoute> route = routes->RouteToward(request.master_addr);
    if (route.ok()) reply.socket_route = std::move(route).value();
    else reply.socket_route_problem = route.error().Message();
    reply.socket_interfaces = routes->Interfaces();
  }
  if (request.audit) reply.audit_errors = NodeCheckErrors(request.sysfs_root.empty() ? "/" : request.sysfs_root, reply.hostname);
  reply.unix_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return reply;
}

}  // namespace topolaunch
