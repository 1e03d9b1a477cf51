#include "launch/connect_back_hub.h"

#include "launch/connect_back_admission.h"
#include "launch/connect_back_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kHelloWait{15'000};  // a connection has this long to say hello
constexpr size_t kHelloLimit = 512;
constexpr size_t kReadChunk = 64 << 10;
constexpr AdmissionLimits kWaiting{256, 1024};  // connections not yet identified (connect_back_admission.h)
constexpr milliseconds kAcceptPause{100};      // out of descriptors: the listener rests this long

std::string Errno(std::string_view what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// One TCP connection: bytes to send, lines read.
struct Link {
  int fd = -1;
  std::string out;       ///< not yet sent
  bool close_out = false;  ///< EOF once `out` is sent
  bool shut = false;       ///< EOF sent
  LineSplitter lines{LineSplitter::kDefaultMaxLine + 16};
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

struct Pending {
  Link link;
  WaitingConnection who;  ///< its address, since when
  std::string hello;      ///< what it has sent so far, up to kHelloLimit
  Clock::time_point deadline;
};

std::string PeerAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  else if (peer.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr, text, sizeof text);
  return text;
}

struct Emitted {
  size_t node;
  OutputStream stream;
  std::string text;
};

}  // namespace

struct ConnectBackHub::State {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> hosts;
  std::unordered_map<std::string, size_t> index_of;  ///< host -> node
  size_t connected = 0;                               ///< nodes that said hello
  OutputSink sink;
  std::string token;
  int listen_fd = -1;
  int wake_fd = -1;
  bool quit = false;
  bool stop_listening = false;  ///< AwaitAgents is over: nobody else may connect
  Clock::time_point accept_paused_until{};
  std::thread thread;
  std::vector<Pending> pending;
  struct NodeLink {
    Link link;
    bool connected = false;
    int task = -1;
    std::optional<int> status;     ///< from the exit frame
    std::optional<ExitInfo> ended;
  };
  std::vector<NodeLink> nodes;
  std::vector<std::string> refused;  ///< hellos that named no waiting node
  std::vector<Emitted> emitted;      ///< lines read, for the sink (the hub's thread only)
  std::function<bool()> step_ended;
  milliseconds step_grace{0};
  std::optional<Clock::time_point> lost_after;

  void Wake() {
    uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof one);
  }
  void Serve();
  void Flush(Link& link);
  void Accept();
  void Admit(int fd, const sockaddr_storage& peer);
  void CloseListener();
  void ReadPending(Pending& p);
  void ReadNode(size_t i, std::vector<size_t>& ends);
  void Frame(size_t i, std::string_view line);
  void Identify(Pending& p, std::string_view line, std::string_view rest);
};

void ConnectBackHub::State::Flush(Link& link) {
  while (!link.out.empty() && link.fd >= 0) {
    ssize_t put = send(link.fd, link.out.data(), link.out.size(), MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && errno == EAGAIN) return;
    if (put <= 0) {
      link.out.clear();
      return;  // the reader is gone; the read side sees the end
    }
    link.out.erase(0, static_cast<size_t>(put));
  }
  if (link.out.empty() && link.close_out && !link.shut && link.fd >= 0) {
    shutdown(link.fd, SHUT_WR);
    link.shut = true;
  }
}

void ConnectBackHub::State::Accept() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t size = sizeof peer;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &size, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      Admit(fd, peer);
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

void ConnectBackHub::State::Admit(int fd, const sockaddr_storage& peer) {
  std::vector<WaitingConnection> waiting;
  waiting.reserve(pending.size());
  for (const Pending& p : pending) waiting.push_back(p.who);
  WaitingConnection who{PeerAddress(peer), Clock::now()};
  if (std::optional<size_t> evict = ConnectionToEvict(waiting, who.source, kWaiting)) {
    pending[*evict].link.Close();
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*evict));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Pending p;
  p.link.fd = fd;
  p.link.out = FormatRunGreeting(token);
  p.who = std::move(who);
  p.deadline = p.who.since + kHelloWait;
  Flush(p.link);
  pending.push_back(std::move(p));
}

void ConnectBackHub::State::CloseListener() {
  if (listen_fd >= 0) close(listen_fd);
  listen_fd = -1;
}

void ConnectBackHub::State::Identify(Pending& p, std::string_view line, std::string_view rest) {
  ConnectHello hello;
  if (!ParseConnectHello(line, token, hello)) {
    p.link.Close();  // not an agent of this step
    return;
  }
  auto found = index_of.find(hello.host);
  if (found != index_of.end() && !nodes[found->second].connected) {
    NodeLink& node = nodes[found->second];
    node.connected = true;
    node.task = hello.task;
    node.link.fd = p.link.fd;
    p.link.fd = -1;
    ++connected;
    if (connected == nodes.size()) CloseListener();  // every agent is in: nobody else may connect
    // What came after the hello belongs to the node's stream.
    if (!rest.empty()) node.link.lines.Feed(rest, [&](std::string_view frame) { Frame(found->second, frame); });
    changed.notify_all();
    return;
  }
  if (refused.size() < 20) refused.push_back(fmt::format("task {} as '{}'", hello.task, hello.host));
  p.link.Close();
}

// The hello is read as it comes, however slowly, into the connection's own
// buffer (peeking at it instead left a partial hello unread, and poll woke
// for it again at once: 1.8 s of CPU in 6 s for one silent client).
void ConnectBackHub::State::ReadPending(Pending& p) {
  char buf[kHelloLimit];
  ssize_t got = recv(p.link.fd, buf, kHelloLimit - p.hello.size(), 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got <= 0) {
    p.link.Close();
    return;
  }
  p.hello.append(buf, static_cast<size_t>(got));
  size_t end = p.hello.find('\n');
  if (end == std::string::npos) {
    if (p.hello.size() >= kHelloLimit) p.link.Close();  // no hello is this long
    return;
  }
  Identify(p, std::string_view(p.hello).substr(0, end), std::string_view(p.hello).substr(end + 1));
}

void ConnectBackHub::State::Frame(size_t i, std::string_view line) {
  AgentFrame f = ParseAgentFrame(line);
  if (f.kind == AgentFrame::Kind::kOutput) emitted.push_back({i, f.stream, std::string(f.text)});
  else if (f.kind == AgentFrame::Kind::kExit) nodes[i].status = f.status;
}

void ConnectBackHub::State::ReadNode(size_t i, std::vector<size_t>& ends) {
  NodeLink& node = nodes[i];
  static thread_local std::string buf(kReadChunk, '\0');
  ssize_t got = recv(node.link.fd, buf.data(), buf.size(), 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  auto frame = [&](std::string_view line) { Frame(i, line); };
  if (got > 0) {
    node.link.lines.Feed(std::string_view(buf.data(), static_cast<size_t>(got)), frame);
    return;
  }
  node.link.lines.Flush(frame);
  node.link.Close();
  ends.push_back(i);
}

void ConnectBackHub::State::Serve() {
  std::vector<pollfd> fds;
  std::vector<Emitted> lines;
  std::vector<size_t> ends;
  std::unique_lock lock(mutex);
  while (!quit) {
    if (stop_listening && (listen_fd >= 0 || !pending.empty())) {
      CloseListener();
      for (Pending& p : pending) p.link.Close();
      pending.clear();
    }
    bool resting = Clock::now() < accept_paused_until;
    fds.assign({{resting ? -1 : listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}});
    for (Pending& p : pending) fds.push_back({p.link.fd, static_cast<short>(POLLIN | (p.link.out.empty() ? 0 : POLLOUT)), 0});
    for (NodeLink& n : nodes)
      fds.push_back({n.link.fd, static_cast<short>(POLLIN | (n.link.out.empty() ? 0 : POLLOUT)), 0});
    lock.unlock();
    poll(fds.data(), fds.size(), 100);
    lock.lock();
    if (quit) break;
    if (fds[1].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_fd, &count, sizeof count);
    }
    size_t k = 2;  // pending and nodes are polled in this order; only this thread adds to or removes from either
    for (size_t j = 0; j < pending.size(); ++j, ++k) {
      Pending& p = pending[j];
      if (fds[k].revents & POLLOUT) Flush(p.link);
      if (p.link.fd >= 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR))) ReadPending(p);
      if (p.link.fd >= 0 && Clock::now() > p.deadline) p.link.Close();
    }
    std::erase_if(pending, [](const Pending& p) { return p.link.fd < 0; });
    for (size_t i = 0; i < nodes.size(); ++i, ++k) {
      NodeLink& n = nodes[i];
      short revents = fds[k].fd == n.link.fd ? fds[k].revents : 0;  // Drop may have closed it meanwhile
      if (n.link.fd < 0) continue;
      Flush(n.link);
      if (revents & (POLLIN | POLLHUP | POLLERR)) ReadNode(i, ends);
    }
    if (fds[0].fd >= 0 && (fds[0].revents & POLLIN)) Accept();
    lines.swap(emitted);
    if (step_ended && !lost_after && step_ended()) lost_after = Clock::now() + step_grace;
    if (lost_after && Clock::now() >= *lost_after)
      for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].link.fd >= 0) {
          nodes[i].link.Close();
          ends.push_back(i);
        }
    if (lines.empty() && ends.empty()) continue;
    // The lines go out before the ends they precede are seen.
    lock.unlock();
    for (const Emitted& line : lines) sink(line.node, line.stream, line.text);
    lock.lock();
    lines.clear();
    for (size_t i : ends) {
      NodeLink& n = nodes[i];
      if (n.ended) continue;
      n.ended = n.status ? ExitInfo{*n.status, "", false} : ExitInfo{-1, "", true};
    }
    ends.clear();
    changed.notify_all();
  }
}

Result<std::unique_ptr<ConnectBackHub>> ConnectBackHub::Open(std::vector<std::string> hosts, OutputSink sink) {
  Result<ConnectBackListener> listener = OpenConnectBackListener();
  if (!listener.ok()) return listener.take_error();
  std::unique_ptr<ConnectBackHub> hub(new ConnectBackHub());
  auto state = std::make_unique<State>();
  state->listen_fd = listener->fd;
  state->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->wake_fd < 0) {
    close(state->listen_fd);
    return Error(ErrorCode::kUnavailable, "connect back", Errno("eventfd"));
  }
  state->hosts = std::move(hosts);
  for (size_t i = 0; i < state->hosts.size(); ++i) state->index_of.emplace(state->hosts[i], i);
  state->nodes.resize(state->hosts.size());
  state->sink = std::move(sink);
  state->token = listener->where.token;
  hub->where_ = listener->where;
  state->thread = std::thread([s = state.get()] { s->Serve(); });
  hub->state_ = std::move(state);
  return hub;
}

ConnectBackHub::~ConnectBackHub() {
  {
    std::lock_guard lock(state_->mutex);
    state_->quit = true;
  }
  state_->Wake();
  state_->thread.join();
  for (Pending& p : state_->pending) p.link.Close();
  for (State::NodeLink& n : state_->nodes) n.link.Close();
  if (state_->listen_fd >= 0) close(state_->listen_fd);
  close(state_->wake_fd);
}

std::vector<std::optional<std::string>> ConnectBackHub::AwaitAgents(milliseconds timeout, const std::function<bool()>& gone) {
  Clock::time_point deadline = Clock::now() + timeout;
  std::unique_lock lock(state_->mutex);
  auto all_in = [this] { return state_->connected == state_->nodes.size(); };
  bool ended = false;
  while (!all_in() && Clock::now() < deadline) {
    lock.unlock();
    ended = gone && gone();
    lock.lock();
    if (ended) break;
    state_->changed.wait_for(lock, milliseconds(100));
  }
  state_->stop_listening = true;  // late agents are failed below; nobody else may wait at the port
  state_->Wake();
  std::string refused = state_->refused.empty()
                            ? ""
                            : fmt::format("; hellos refused (not a planned host, or one that had already connected): {}",
                                          fmt::join(state_->refused, ", "));
  std::vector<std::optional<std::string>> why(state_->nodes.size());
  for (size_t i = 0; i < why.size(); ++i) {
    if (state_->nodes[i].connected) continue;
    why[i] = ended ? fmt::format("srun ended before the agent on {} connected back{}", state_->hosts[i], refused)
                   : fmt::format("the agent on {} did not connect back to port {} of {} within {} s{}", state_->hosts[i],
                                 where_.port, fmt::join(where_.addresses, ", "),
                                 std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), refused);
  }
  return why;
}

void ConnectBackHub::WatchStep(std::function<bool()> ended, milliseconds grace) {
  std::lock_guard lock(state_->mutex);
  state_->step_ended = std::move(ended);
  state_->step_grace = grace;
}

std::optional<ExitInfo> ConnectBackHub::Wait(size_t i, milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  state_->changed.wait_for(lock, timeout, [&] { return state_->nodes[i].ended.has_value(); });
  return state_->nodes[i].ended;
}

Status ConnectBackHub::WriteStdin(size_t i, std::string_view data) {
  {
    std::lock_guard lock(state_->mutex);
    State::NodeLink& n = state_->nodes[i];
    if (n.link.fd < 0 || n.link.close_out)
      return Error(ErrorCode::kUnavailable, state_->hosts[i], "the agent's connection is closed");
    n.link.out.append(data);
  }
  state_->Wake();
  return Ok{};
}

void ConnectBackHub::CloseStdin(size_t i) {
  {
    std::lock_guard lock(state_->mutex);
    state_->nodes[i].link.close_out = true;
  }
  state_->Wake();
}

ExitInfo ConnectBackHub::Drop(size_t i) {
  std::lock_guard lock(state_->mutex);
  State::NodeLink& n = state_->nodes[i];
  n.link.Close();
  if (!n.ended) n.ended = ExitInfo{-1, "", true};
  state_->changed.notify_all();
  return *n.ended;
}

std::optional<size_t> ConnectBackHub::NodeOfTask(int task) const {
  std::lock_guard lock(state_->mutex);
  for (size_t i = 0; i < state_->nodes.size(); ++i)
    if (state_->nodes[i].connected && state_->nodes[i].task == task) return i;
  return std::nullopt;
}

}  // namespace topolaunch
