// Connect-back handshake benchmark: prints figures, asserts nothing.
//
// AGENTS simulated agents (other processes, on loopback) connect to one
// ConnectBackHub at once and each completes connect_back.h's handshake
// (hello with its proof, `run`'s answer checked, ready). Timed from the
// first connect to the moment AwaitAgents sees every node in:
//   hub      the real hub: admission, the proofs, the channel keys;
//   bare     the peer: a poll loop in this process that accepts the same
//            connections and trades the same three lines with them, with
//            no proof checked or made (what any hub costs before
//            authentication);
// each row's wall time and this process's CPU (the hub's thread; the
// agents' CPU is theirs), medians over RUNS, and the ratios hub/bare.
//
// Usage: connect_back_bench [AGENTS] [RUNS]   (default 2000 5)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_stats.h"
#include "launch/connect_back_auth.h"
#include "launch/connect_back_hub.h"

using namespace topolaunch;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kClientProcesses = 4;

double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// A connection to `port` on 127.0.0.1 from 127.0.X.Y, a source address of
// the agent's own (loopback is all of 127/8): as on a cluster, each agent
// comes from its own node, and the hub admits at most 256 unproven
// connections per source.
int ConnectLoopback(int port, int agent) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f000000u | (static_cast<uint32_t>(agent / 250 + 1) << 8) | static_cast<uint32_t>(agent % 250 + 1));
  bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One line from `fd` (blocking), without its '\n'.
std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

void SendAll(int fd, const std::string& text) { (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL); }

// The agents `first`..`first + count - 1`: every connection opened and its
// hello sent first, then each answered in turn (`proofs`: the real
// handshake, else the same lines with nothing proven). Holds the
// connections until the parent closes them.
[[noreturn]] void RunAgents(int port, const std::string& secret, int first, int count, bool proofs) {
  std::vector<int> fds;
  std::vector<ConnectHello> hellos;
  std::vector<NodeCredential> credentials;
  for (int i = first; i < first + count; ++i) {
    credentials.emplace_back(secret, fmt::format("a{}", i));
    hellos.push_back(credentials.back().Hello(i, *RandomHex(32)));
    if (!proofs) hellos.back().proof = std::string(64, '0');
    fds.push_back(ConnectLoopback(port, i));
    if (fds.back() >= 0) SendAll(fds.back(), FormatConnectHello(hellos.back()));
  }
  for (size_t k = 0; k < fds.size(); ++k) {
    if (fds[k] < 0) continue;
    std::optional<RunAnswer> answer = ParseRunAnswer(ReadLine(fds[k]));
    if (!answer) continue;
    SendAll(fds[k], FormatAgentReady(proofs ? credentials[k].Ready(hellos[k], *answer) : std::string(64, '0')));
  }
  for (int fd : fds)
    if (fd >= 0) ReadLine(fd);  // until EOF
  _exit(0);
}

std::vector<pid_t> StartAgents(int port, const std::string& secret, int agents, bool proofs) {
  std::vector<pid_t> children;
  for (int c = 0; c < kClientProcesses; ++c) {
    int first = agents * c / kClientProcesses, last = agents * (c + 1) / kClientProcesses;
    pid_t pid = fork();
    if (pid == 0) RunAgents(port, secret, first, last - first, proofs);
    children.push_back(pid);
  }
  return children;
}

void Reap(const std::vector<pid_t>& children) {
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
}

struct Figures {
  double wall = 0;
  double cpu = 0;
  int in = 0;
};

Figures TimeHub(int agents) {
  std::vector<std::string> hosts;
  for (int i = 0; i < agents; ++i) hosts.push_back(fmt::format("a{}", i));
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open(hosts, [](size_t, OutputStream, std::string_view) {});
  if (!hub.ok()) {
    fmt::print(stderr, "{}\n", hub.error().Message());
    std::exit(1);
  }
  double cpu0 = CpuSeconds(RUSAGE_SELF);
  Clock::time_point t0 = Clock::now();
  std::vector<pid_t> children = StartAgents((*hub)->where().port, (*hub)->where().secret, agents, true);
  std::vector<std::optional<std::string>> missing = (*hub)->AwaitAgents(std::chrono::seconds(120), nullptr);
  Figures f{std::chrono::duration<double>(Clock::now() - t0).count(), CpuSeconds(RUSAGE_SELF) - cpu0, 0};
  for (const auto& why : missing) f.in += why ? 0 : 1;
  hub->reset();
  Reap(children);
  return f;
}

// The bare peer: accept, read a line, answer a line, read a line; no proof.
Figures TimeBare(int agents) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof any;
  bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof any);
  listen(listener, SOMAXCONN);
  getsockname(listener, reinterpret_cast<sockaddr*>(&any), &size);
  double cpu0 = CpuSeconds(RUSAGE_SELF);
  Clock::time_point t0 = Clock::now();
  std::vector<pid_t> children = StartAgents(ntohs(any.sin_port), std::string(64, '0'), agents, false);
  struct Conn {
    int fd;
    std::string got;
    int lines = 0;
  };
  std::vector<Conn> conns;
  std::vector<pollfd> fds;
  int in = 0;
  const std::string answer = FormatRunAnswer({std::string(64, '1'), std::string(64, '2')});
  while (in < agents && Clock::now() - t0 < std::chrono::seconds(120)) {
    fds.assign(1, {listener, POLLIN, 0});
    for (const Conn& c : conns) fds.push_back({c.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
    for (size_t k = 1; k < fds.size(); ++k) {
      if (!(fds[k].revents & POLLIN)) continue;
      Conn& c = conns[k - 1];
      char buf[512];
      ssize_t got = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got <= 0) continue;
      c.got.append(buf, static_cast<size_t>(got));
      for (size_t end; (end = c.got.find('\n')) != std::string::npos;) {
        c.got.erase(0, end + 1);
        if (++c.lines == 1) SendAll(c.fd, answer);
        else ++in;
      }
    }
    if (fds[0].revents & POLLIN)
      for (int fd; (fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) conns.push_back({fd, {}, 0});
  }
  Figures f{std::chrono::duration<double>(Clock::now() - t0).count(), CpuSeconds(RUSAGE_SELF) - cpu0, in};
  for (const Conn& c : conns) close(c.fd);
  close(listener);
  Reap(children);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int agents = argc > 1 ? std::atoi(argv[1]) : 2000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < static_cast<rlim_t>(agents) + 64) {
    fmt::print(stderr, "this process may open only {} descriptors; {} agents need more\n", limit.rlim_cur, agents);
    return 1;
  }
  if (Status crypto = LoadChannelCrypto(); !crypto.ok()) {
    fmt::print(stderr, "{}\n", crypto.error().Message());
    return 1;
  }
  std::vector<double> hub_wall, hub_cpu, bare_wall, bare_cpu;
  int hub_in = agents, bare_in = agents;
  for (int r = 0; r < runs; ++r) {
    Figures h = r % 2 ? TimeBare(agents) : TimeHub(agents);  // alternating, each first in turn
    Figures b = r % 2 ? TimeHub(agents) : TimeBare(agents);
    if (r % 2) std::swap(h, b);
    hub_wall.push_back(h.wall), hub_cpu.push_back(h.cpu), bare_wall.push_back(b.wall), bare_cpu.push_back(b.cpu);
    hub_in = std::min(hub_in, h.in), bare_in = std::min(bare_in, b.in);
  }
  using bench::Median;
  fmt::print("{} agents at once on loopback, {} client processes, medians of {} runs\n", agents, kClientProcesses, runs);
  fmt::print("{:<6} {:>10} {:>10} {:>8}\n", "row", "wall s", "cpu s", "in");
  fmt::print("{:<6} {:>10.3f} {:>10.3f} {:>8}\n", "hub", Median(hub_wall), Median(hub_cpu), hub_in);
  fmt::print("{:<6} {:>10.3f} {:>10.3f} {:>8}\n", "bare", Median(bare_wall), Median(bare_cpu), bare_in);
  fmt::print("ratio hub/bare: wall {:.2f}, cpu {:.2f}; hub CPU per agent {:.1f} us\n", Median(hub_wall) / Median(bare_wall),
             Median(hub_cpu) / Median(bare_cpu), 1e6 * Median(hub_cpu) / agents);
  return 0;
}
