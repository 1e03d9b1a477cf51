#include "launch/connect_back_listener.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "launch/channel_crypto.h"

namespace topolaunch {

namespace {

std::string Errno(std::string_view what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// This machine's addresses, the ones other nodes most likely reach first.
std::vector<std::string> LocalAddresses() {
  std::vector<std::string> v4, v6, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {"127.0.0.1"};
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      ((a->ifa_flags & IFF_LOOPBACK) ? loopback : v4).push_back(text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      auto* in = reinterpret_cast<sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&in->sin6_addr)) continue;  // needs a scope id the node cannot know
      inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
      ((a->ifa_flags & IFF_LOOPBACK) ? loopback : v6).push_back(text);
    }
  }
  freeifaddrs(list);
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4.empty() ? loopback : v4;
}

// A socket bound to `port` (0: any) of every address (IPv6 with IPv4
// mapped, else IPv4), or, when `address` is given, of that one alone; -1
// with errno set when not.
int Bind(const std::string& address, int port) {
  sockaddr_storage storage{};
  socklen_t size = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  bool given = !address.empty();
  int fd = -1;
  if (!given || inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    if (!given) v6->sin6_addr = in6addr_any;
    size = sizeof *v6;
    fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int only = given ? 1 : 0;
    if (fd >= 0) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof only);
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&storage), size) == 0) return fd;
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    if (given) return -1;
  }
  storage = {};
  v4->sin_family = AF_INET;
  v4->sin_port = htons(static_cast<uint16_t>(port));
  v4->sin_addr.s_addr = htonl(INADDR_ANY);
  if (given && inet_pton(AF_INET, address.c_str(), &v4->sin_addr) != 1) {
    errno = EINVAL;
    return -1;
  }
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(v4), sizeof *v4) == 0) return fd;
  int saved = errno;
  if (fd >= 0) close(fd);
  errno = saved;
  return -1;
}

// A socket bound to a free port of `range`, tried from a random one on (so
// that two `run`s starting together rarely try the same ports); -1 with
// errno set (EADDRINUSE: every port is taken).
int BindInRange(const std::string& address, const PortRange& range) {
  int count = range.last - range.first + 1;
  Result<std::string> random = RandomHex(4);
  int start = random.ok() ? static_cast<int>(std::stoul(*random, nullptr, 16) % static_cast<unsigned>(count)) : 0;
  for (int k = 0; k < count; ++k) {
    int fd = Bind(address, range.first + (start + k) % count);
    if (fd >= 0 || errno != EADDRINUSE) return fd;
  }
  errno = EADDRINUSE;
  return -1;
}

// A listening socket and its port.
Result<std::pair<int, int>> Listen(const std::string& address, const std::optional<PortRange>& ports) {
  int fd = ports ? BindInRange(address, *ports) : Bind(address, 0);
  if (fd < 0 && ports && errno == EADDRINUSE)
    return Error(ErrorCode::kUnavailable, "connect back",
                 fmt::format("no port of SrunPortRange {} (slurm.conf) is free on this machine for the agents' "
                             "connections: srun and other jobs hold all of them",
                             FormatPortRange(*ports)));
  if (fd < 0) {
    if (address.empty()) return Error(ErrorCode::kUnavailable, "connect back", Errno("cannot open a TCP port for the agents"));
    return Error(ErrorCode::kBadInput, "--connect-back-address",
                 Errno(fmt::format("cannot listen on {} (a numeric address of this machine)", address)));
  }
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  if (listen(fd, SOMAXCONN) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size) != 0) {
    std::string why = Errno("cannot listen for the agents");
    close(fd);
    return Error(ErrorCode::kUnavailable, "connect back", why);
  }
  int port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::pair{fd, port};
}

}  // namespace

Result<ConnectBackListener> OpenConnectBackListener(const ListenOn& on) {
  const std::string& address = on.address;
  Result<std::string> secret = RandomHex(32);
  if (!secret.ok()) return secret.take_error();
  Result<std::pair<int, int>> listening = Listen(address, on.ports);
  if (!listening.ok()) return listening.take_error();
  ConnectBack where{listening->second, *secret, address.empty() ? LocalAddresses() : std::vector<std::string>{address},
                    !address.empty()};
  return ConnectBackListener{listening->first, std::move(where)};
}

}  // namespace topolaunch
