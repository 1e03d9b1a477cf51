#include "launch/connect_back_hub.h"

#include "launch/connect_back_listener.h"

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
constexpr size_t kMaxPending = 4096;  // connections not yet identified; more are refused

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
  Clock::time_point deadline;
};

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
  void ReadPending(Pending& p);
  void ReadNode(size_t i, std::vector<Emitted>& lines, std::vector<size_t>& ends);
  void Identify(Pending& p, std::string_view line);
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
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    if (pending.size() >= kMaxPending) {
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Pending p;
    p.link.fd = fd;
    p.link.out = FormatRunGreeting(token);
    p.deadline = Clock::now() + kHelloWait;
    Flush(p.link);
    pending.push_back(std::move(p));
  }
}

void ConnectBackHub::State::Identify(Pending& p, std::string_view line) {
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
    if (connected == nodes.size()) {  // every agent is in: nobody else may connect
      close(listen_fd);
      listen_fd = -1;
    }
    changed.notify_all();
    return;
  }
  if (refused.size() < 20) refused.push_back(fmt::format("task {} as '{}'", hello.task, hello.host));
  p.link.Close();
}

void ConnectBackHub::State::ReadPending(Pending& p) {
  char buf[kHelloLimit];
  ssize_t got = recv(p.link.fd, buf, sizeof buf, MSG_PEEK);
  if (got <= 0) {
    if (got == 0 || (errno != EAGAIN && errno != EINTR)) p.link.Close();
    return;
  }
  const char* end = static_cast<const char*>(std::memchr(buf, '\n', static_cast<size_t>(got)));
  if (!end) {
    if (static_cast<size_t>(got) >= sizeof buf) p.link.Close();
    return;  // the rest of the hello is on its way
  }
  // Only the hello is taken: what follows belongs to the node's stream.
  size_t length = static_cast<size_t>(end - buf) + 1;
  (void)!recv(p.link.fd, buf, length, 0);
  Identify(p, std::string_view(buf, length - 1));
}

void ConnectBackHub::State::ReadNode(size_t i, std::vector<Emitted>& lines, std::vector<size_t>& ends) {
  NodeLink& node = nodes[i];
  static thread_local std::string buf(kReadChunk, '\0');
  ssize_t got = recv(node.link.fd, buf.data(), buf.size(), 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  auto frame = [&](std::string_view line) {
    AgentFrame f = ParseAgentFrame(line);
    if (f.kind == AgentFrame::Kind::kOutput) lines.push_back({i, f.stream, std::string(f.text)});
    else if (f.kind == AgentFrame::Kind::kExit) node.status = f.status;
  };
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
    fds.assign({{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}});
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
      if (revents & (POLLIN | POLLHUP | POLLERR)) ReadNode(i, lines, ends);
    }
    if (fds[0].revents & POLLIN) Accept();
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
