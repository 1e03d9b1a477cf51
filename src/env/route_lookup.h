// Which local interface reaches a host: the question behind
// NCCL_SOCKET_IFNAME. One real implementation reads the kernel's state.
#pragma once

#include <memory>
#include <string>

#include "env/env_facts.h"
#include "topolaunch/result.h"

namespace topolaunch {

class RouteLookup {
 public:
  virtual ~RouteLookup() = default;
  /// The interface this machine sends through toward `host` (a name or an
  /// IPv4 address). When `host` is this machine, the interface holding its
  /// address, or, when the name resolves to loopback (127.0.1.1 in
  /// /etc/hosts), the default route's interface. Errors: kUnavailable when
  /// the name does not resolve or no route matches.
  virtual Result<SocketRoute> RouteToward(const std::string& host) = 0;
  /// This machine's IPv4 interfaces that are up, loopback left out, by name.
  virtual std::vector<SocketInterface> Interfaces() = 0;
};

/// getaddrinfo + getifaddrs + /proc/net/route (IPv4; policy routing rules
/// are not consulted).
std::unique_ptr<RouteLookup> MakeKernelRouteLookup();

}  // namespace topolaunch
