// The connect-back hub's connections not yet proven: the port's accepts,
// who may wait (connect_back_admission.h), and the handshake
// (connect_back.h) up to the moment a node is in.
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "launch/connect_back_hub_state.h"

namespace topolaunch {

using namespace hub_internal;

namespace {

std::string PeerAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  else if (peer.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr, text, sizeof text);
  return text;
}

}  // namespace

void ConnectBackHub::State::Accept() {
  for (int accepted = 0; accepted < kAcceptsPerRound;) {
    sockaddr_storage peer{};
    socklen_t size = sizeof peer;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &size, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      Queue(fd, peer);
      ++accepted;
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      // Out of descriptors the connection stays queued, and poll would wake
      // for it at once, again and again: the oldest waiting connection gives
      // way to it, or, with none waiting, the listener rests a moment.
      auto oldest = std::min_element(pending.begin(), pending.end(),
                                     [](const Pending& a, const Pending& b) { return a.who.since < b.who.since; });
      if (oldest != pending.end()) {
        oldest->link.Close();
        pending.erase(oldest);
        continue;
      }
      accept_paused_until = Clock::now() + kAcceptPause;
    }
    return;
  }
}

void ConnectBackHub::State::Queue(int fd, const sockaddr_storage& peer) {
  std::vector<WaitingConnection> waiting;
  waiting.reserve(pending.size());
  for (const Pending& p : pending) waiting.push_back(p.who);
  WaitingConnection who{PeerAddress(peer), Clock::now()};
  AdmissionLimits limits{kWaitingPerSource, nodes.size() + kWaitingBeyondNodes};
  if (std::optional<size_t> evict = ConnectionToEvict(waiting, who.source, limits)) {
    pending[*evict].link.Close();
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*evict));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Pending p;
  p.link.fd = fd;  // `run` says nothing until the hello proves itself
  p.who = std::move(who);
  p.deadline = p.who.since + kHelloWait;
  pending.push_back(std::move(p));
}

void ConnectBackHub::State::CloseListener() {
  if (listen_fd >= 0) close(listen_fd);
  listen_fd = -1;
}

void ConnectBackHub::State::Refuse(Pending& p, const ConnectHello& hello, std::string_view why) {
  if (refused.size() < 20) refused.push_back(fmt::format("task {} as '{}' ({})", hello.task, hello.host, why));
  p.link.Close();
}

// The hello: answered only when it proves the key of a node still awaited.
void ConnectBackHub::State::Answer(Pending& p, std::string_view line) {
  std::optional<ConnectHello> hello = ParseConnectHello(line);
  if (!hello) {
    p.link.Close();  // not an agent
    return;
  }
  auto found = index_of.find(hello->host);
  if (found == index_of.end()) return Refuse(p, *hello, "not a planned host");
  if (!credentials[found->second].Proves(*hello)) return Refuse(p, *hello, "its proof is wrong: not this job's agent");
  if (nodes[found->second].connected) return Refuse(p, *hello, "that node had already connected");
  Result<std::string> nonce = RandomHex(32);
  if (!nonce.ok()) {
    p.link.Close();
    return;
  }
  p.node = found->second;
  p.hello = std::move(*hello);
  p.answer = credentials[*p.node].Answer(p.hello, std::move(nonce).value());
  p.link.out = FormatRunAnswer(p.answer);
  Flush(p.link);
}

// The ready line: the node is in once it proves this connection's nonce.
// What came after it is the node's first records.
void ConnectBackHub::State::Admit(Pending& p, std::string_view line, std::string_view rest, std::vector<size_t>& ends) {
  std::optional<std::string> proof = ParseAgentReady(line);
  size_t i = *p.node;
  NodeLink& node = nodes[i];
  if (!proof || !credentials[i].ReadyProves(p.hello, p.answer, *proof)) return Refuse(p, p.hello, "no proof of this connection");
  if (node.connected) return Refuse(p, p.hello, "that node had already connected");
  ChannelKeys keys = credentials[i].Keys(p.hello, p.answer);
  node.seal = RecordSealer(keys.to_agent);
  node.open = RecordOpener(keys.to_run);
  node.connected = true;
  node.task = p.hello.task;
  node.link.fd = p.link.fd;
  p.link.fd = -1;
  ++connected;
  if (connected == nodes.size()) CloseListener();  // every agent is in: nobody else may connect
  if (!rest.empty()) Receive(i, rest, ends);
  changed.notify_all();
}

// The handshake's lines are read as they come, however slowly, into the
// connection's own buffer (peeking at them instead left a partial hello
// unread, and poll woke for it again at once: 1.8 s of CPU in 6 s for one
// silent client).
void ConnectBackHub::State::ReadPending(Pending& p, std::vector<size_t>& ends) {
  char buf[kHelloLimit];
  ssize_t got = recv(p.link.fd, buf, kHelloLimit - p.got.size(), 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got <= 0) {
    p.link.Close();
    return;
  }
  p.got.append(buf, static_cast<size_t>(got));
  size_t end = p.got.find('\n');
  if (end == std::string::npos) {
    if (p.got.size() >= kHelloLimit) p.link.Close();  // no hello is this long
    return;
  }
  std::string line = p.got.substr(0, end);
  p.got.erase(0, end + 1);
  if (!p.node) {
    if (p.got.empty()) Answer(p, line);
    else p.link.Close();  // spoke on before it was answered: no agent does
    return;
  }
  Admit(p, line, p.got, ends);
}

}  // namespace topolaunch
