#include "launch/agent_connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int MsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on `fd` until the deadline; false at the deadline.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ready = poll(&p, 1, MsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

// `run`'s answer, read a byte at a time up to its '\n' (nothing after it
// is `run`'s until the ready line went out).
Result<std::string> ReadAnswer(int fd, Clock::time_point deadline) {
  std::string line;
  while (line.size() < 256) {
    if (!WaitFor(fd, POLLIN, deadline)) return Error(ErrorCode::kTimeout, "", "no answer to the hello");
    char c;
    ssize_t got = read(fd, &c, 1);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0)
      return Error(ErrorCode::kUnavailable, "",
                   got == 0 ? "closed without an answer (not this job's `run`, or the hello was refused)"
                            : std::strerror(errno));
    if (c == '\n') return line;
    line += c;
  }
  return Error(ErrorCode::kUnavailable, "", "the program there is not this job's `run` (no answer line)");
}

Status WriteAllUntil(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return Error(ErrorCode::kTimeout, "", "cannot send the handshake");
    ssize_t put = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (put < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (put <= 0) return Error(ErrorCode::kUnavailable, "", std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(put));
  }
  return Ok{};
}

// The handshake on a connected socket: hello, `run`'s answer checked, ready.
Result<ChannelKeys> Handshake(int fd, const NodeCredential& credential, int task, Clock::time_point deadline) {
  Result<std::string> nonce = RandomHex(32);
  if (!nonce.ok()) return nonce.take_error();
  ConnectHello hello = credential.Hello(task, std::move(nonce).value());
  if (Status sent = WriteAllUntil(fd, FormatConnectHello(hello), deadline); !sent.ok()) return sent.error();
  Result<std::string> line = ReadAnswer(fd, deadline);
  if (!line.ok()) return line.take_error();
  std::optional<RunAnswer> answer = ParseRunAnswer(*line);
  if (!answer || !credential.Proves(hello, *answer))
    return Error(ErrorCode::kUnavailable, "", "the program there is not this job's `run` (its answer proves nothing)");
  if (Status sent = WriteAllUntil(fd, FormatAgentReady(credential.Ready(hello, *answer)), deadline); !sent.ok())
    return sent.error();
  return credential.Keys(hello, *answer);
}

// One address: connect and handshake. The socket, or why not.
Result<ConnectedRun> TryAddress(const std::string& address, int port, const NodeCredential& credential, int task,
                                milliseconds each) {
  sockaddr_storage storage{};
  socklen_t size = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    size = sizeof *v4;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    size = sizeof *v6;
  } else {
    return Error(ErrorCode::kBadInput, "", "not a numeric address");
  }
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Error(ErrorCode::kUnavailable, "", std::strerror(errno));
  Clock::time_point deadline = Clock::now() + each;
  auto fail = [fd](Error error) {
    close(fd);
    return error;
  };
  if (connect(fd, reinterpret_cast<sockaddr*>(&storage), size) != 0) {
    if (errno != EINPROGRESS) return fail(Error(ErrorCode::kUnavailable, "", std::strerror(errno)));
    if (!WaitFor(fd, POLLOUT, deadline)) return fail(Error(ErrorCode::kTimeout, "", "no answer"));
    int problem = 0;
    socklen_t length = sizeof problem;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &problem, &length);
    if (problem != 0) return fail(Error(ErrorCode::kUnavailable, "", std::strerror(problem)));
  }
  Result<ChannelKeys> keys = Handshake(fd, credential, task, deadline);
  if (!keys.ok()) return fail(keys.take_error());
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return ConnectedRun{fd, *keys};
}

}  // namespace

Result<ConnectedRun> ConnectToRun(const ConnectBack& where, int task, const std::string& host, milliseconds each) {
  if (Status crypto = LoadChannelCrypto(); !crypto.ok()) return crypto.error();
  NodeCredential credential(where.secret, host);
  std::vector<std::string> tried;
  for (const std::string& address : where.addresses) {
    Result<ConnectedRun> fd = TryAddress(address, where.port, credential, task, each);
    if (fd.ok()) return fd;
    tried.push_back(fmt::format("{} port {}: {}", address, where.port, fd.error().problems.front().what));
  }
  return Error(ErrorCode::kUnavailable, "connect back",
               fmt::format("cannot reach `run` on the login node ({})", fmt::join(tried, "; ")));
}

}  // namespace topolaunch
