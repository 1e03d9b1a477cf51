// The kernel's view: resolve the name, see whether the address is ours
// (getifaddrs), else take the longest-prefix route from /proc/net/route.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
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

  std::vector<SocketInterface> Interfaces() override {
    std::map<std::string, SocketInterface> found;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return {};
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
        continue;
      if (found.contains(i->ifa_name)) continue;  // the first address names it
      std::uint32_t mask = i->ifa_netmask ? ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr) : 0;
      SocketInterface iface{i->ifa_name,
                            fmt::format("{}/{}", Dotted(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr),
                                        __builtin_popcount(mask)),
                            std::nullopt};
      // A virtual or down link reads -1 or fails: unknown.
      Result<std::string> speed = ReadTextFile(fmt::format("/sys/class/net/{}/speed", i->ifa_name));
      if (speed.ok()) {
        int mbps = std::atoi(speed->c_str());
        if (mbps > 0) iface.speed_mbps = mbps;
      }
      found.emplace(iface.name, iface);
    }
    freeifaddrs(list);
    std::vector<SocketInterface> out;
    for (auto& [name, iface] : found) out.push_back(std::move(iface));
    return out;
  }
};

}  // namespace

std::unique_ptr<RouteLookup> MakeKernelRouteLookup() { return std::make_unique<KernelRouteLookup>(); }

}  // namespace topolaunch
