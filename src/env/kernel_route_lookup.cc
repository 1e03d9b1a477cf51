// The kernel's view: resolve the name, see whether the address is ours
// (getifaddrs), else take the longest-prefix route from /proc/net/route.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <map>

#include <fmt/format.h>

#include "core/text_io.h"
#include "env/route_lookup.h"
#include "env/route_table.h"

namespace topolaunch {

namespace {

std::string Dotted(std::uint32_t address) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr in{address};
  inet_ntop(AF_INET, &in, text, sizeof text);
  return text;
}

Result<std::vector<std::uint32_t>> Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    return Error(ErrorCode::kUnavailable, host, fmt::format("cannot resolve the rank-0 host: {}", gai_strerror(rc)));
  std::vector<std::uint32_t> addresses;
  for (addrinfo* a = found; a; a = a->ai_next)
    addresses.push_back(reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr.s_addr);
  freeaddrinfo(found);
  return addresses;
}

std::map<std::uint32_t, std::string> LocalAddresses() {
  std::map<std::uint32_t, std::string> local;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return local;
  for (ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
      local.emplace(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr, i->ifa_name);
  freeifaddrs(list);
  return local;
}

bool IsLoopback(std::uint32_t address) { return (ntohl(address) >> 24) == 127; }

class KernelRouteLookup : public RouteLookup {
 public:
  Result<SocketRoute> RouteToward(const std::string& host) override {
    Result<std::vector<std::uint32_t>> addresses = Resolve(host);
    if (!addresses.ok()) return addresses.take_error();
    std::map<std::uint32_t, std::string> local = LocalAddresses();
    Result<std::string> table = ReadTextFile("/proc/net/route");
    if (!table.ok()) return Error(ErrorCode::kUnavailable, "/proc/net/route", table.error().Message());
    Result<std::vector<RouteEntry>> routes = ParseProcNetRoute(*table, "/proc/net/route");
    if (!routes.ok()) return routes.take_error();
    bool loopback = false;
    for (std::uint32_t address : *addresses) {
      if (IsLoopback(address)) { loopback = true; continue; }
      if (auto it = local.find(address); it != local.end())
        return SocketRoute{it->second, fmt::format("{} is this machine ({} on {})", host, Dotted(address), it->second)};
      if (std::optional<std::string> iface = ChooseRoute(*routes, address))
        return SocketRoute{*iface, fmt::format("route to {} ({}) via {}", Dotted(address), host, *iface)};
    }
    if (loopback)
      if (std::optional<std::string> iface = ChooseRoute(*routes, 0))
        return SocketRoute{*iface, fmt::format("{} is this machine and resolves to loopback; the default route's interface {}", host, *iface)};
    return Error(ErrorCode::kUnavailable, host, "no route toward the rank-0 host");
  }
};

}  // namespace

std::unique_ptr<RouteLookup> MakeKernelRouteLookup() { return std::make_unique<KernelRouteLookup>(); }

}  // namespace topolaunch
