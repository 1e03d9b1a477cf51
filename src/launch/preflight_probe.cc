// The node side of the preflight: each fact through the adapter that
// already reads it (hwloc layout source, RDMA sysfs reader, kernel route
// lookup), plus a PATH search and a trial bind for the master port.
#include "launch/preflight_probe.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "discover/hwloc_layout_source.h"
#include "discover/local_host.h"
#include "env/rdma_sysfs.h"
#include "env/route_lookup.h"
#include "launch/program_search.h"

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

}  // namespace

PreflightReply GatherPreflight(const PreflightRequest& request) {
  PreflightReply reply;
  reply.hostname = LocalShortHostName();
  for (const std::string& name : request.programs) reply.programs.push_back({name, FindProgram(name)});
  if (request.master_port > 0) CheckPort(request.master_port, reply);
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
    Result<SocketRoute> route = MakeKernelRouteLookup()->RouteToward(request.master_addr);
    if (route.ok()) reply.socket_route = std::move(route).value();
    else reply.socket_route_problem = route.error().Message();
  }
  reply.unix_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return reply;
}

}  // namespace topolaunch
