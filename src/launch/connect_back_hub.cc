#include "launch/connect_back_hub.h"

#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/connect_back_hub_state.h"
#include "launch/connect_back_listener.h"

namespace topolaunch {

using namespace hub_internal;

namespace {

std::string Errno(std::string_view what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

}  // namespace

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


void ConnectBackHub::State::Frame(size_t i, std::string_view line) {
  AgentFrame f = ParseAgentFrame(line);
  if (f.kind == AgentFrame::Kind::kOutput) emitted.push_back({i, f.stream, std::string(f.text)});
  else if (f.kind == AgentFrame::Kind::kExit) nodes[i].status = f.status;
}

// Records from node i's agent: their lines to the node's frames. A record
// that does not authenticate closes the connection (the node is lost).
void ConnectBackHub::State::Receive(size_t i, std::string_view wire, std::vector<size_t>& ends) {
  NodeLink& node = nodes[i];
  static thread_local std::string plain;
  plain.clear();
  bool sound = node.open.Feed(wire, plain);
  node.link.lines.Feed(plain, [&](std::string_view line) { Frame(i, line); });
  if (sound) return;
  emitted.push_back({i, OutputStream::kStderr,
                     fmt::format("topolaunch: the connection from {}'s agent carried a record that does not "
                                 "authenticate (altered on the way?); closed",
                                 hosts[i])});
  node.link.Close();
  ends.push_back(i);
}

void ConnectBackHub::State::ReadNode(size_t i, std::vector<size_t>& ends) {
  NodeLink& node = nodes[i];
  static thread_local std::string buf(kReadChunk, '\0');
  ssize_t got = recv(node.link.fd, buf.data(), buf.size(), 0);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got > 0) return Receive(i, std::string_view(buf.data(), static_cast<size_t>(got)), ends);
  node.link.lines.Flush([&](std::string_view line) { Frame(i, line); });
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
      if (p.link.fd >= 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR))) ReadPending(p, ends);
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

Result<std::unique_ptr<ConnectBackHub>> ConnectBackHub::Open(std::vector<std::string> hosts, OutputSink sink,
                                                             const ListenOn& where) {
  if (Status crypto = LoadChannelCrypto(); !crypto.ok()) return crypto.error();
  Result<ConnectBackListener> listener = OpenConnectBackListener(where);
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
  for (size_t i = 0; i < state->hosts.size(); ++i) {
    state->index_of.emplace(state->hosts[i], i);
    state->credentials.emplace_back(listener->where.secret, state->hosts[i]);
  }
  state->nodes.resize(state->hosts.size());
  state->sink = std::move(sink);
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
                            : fmt::format("; hellos refused: {}",
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
    n.seal.Seal(data, n.link.out);
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
