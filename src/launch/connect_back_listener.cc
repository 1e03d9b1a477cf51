#include "launch/connect_back_listener.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string Errno(std::string_view what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

Result<std::string> NewToken() {
  unsigned char bytes[32];
  size_t have = 0;
  while (have < sizeof bytes) {
    ssize_t got = getrandom(bytes + have, sizeof bytes - have, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Error(ErrorCode::kUnavailable, "connect back", Errno("no random bytes for the token"));
    have += static_cast<size_t>(got);
  }
  std::string token;
  for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
  return token;
}

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

// A listening socket on every address: IPv6 with IPv4 mapped, else IPv4.
Result<std::pair<int, int>> Listen() {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0) {
    int zero = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) {
      std::string why = Errno("cannot open a TCP port for the agents");
      if (fd >= 0) close(fd);
      return Error(ErrorCode::kUnavailable, "connect back", why);
    }
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

Result<ConnectBackListener> OpenConnectBackListener() {
  Result<std::string> token = NewToken();
  if (!token.ok()) return token.take_error();
  Result<std::pair<int, int>> listening = Listen();
  if (!listening.ok()) return listening.take_error();
  return ConnectBackListener{listening->first, ConnectBack{listening->second, *token, LocalAddresses()}};
}

}  // namespace topolaunch
