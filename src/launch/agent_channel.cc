#include "launch/agent_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunk = 64 << 10;
constexpr size_t kBacklog = 1 << 20;  // bytes held per direction before reading waits

// Sends what it can of `out` on `fd`; false once the peer is gone.
bool SendSome(int fd, std::string& out) {
  ssize_t put = send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (put < 0) return errno == EAGAIN || errno == EINTR;
  out.erase(0, static_cast<size_t>(put));
  return true;
}

// One side of the pump: bytes held for it, and whether it is still open.
struct Side {
  int fd = -1;
  std::string out;        ///< to send to it
  bool reading = true;    ///< until its EOF
  bool writable = true;   ///< until it is gone
  bool shut = false;      ///< EOF sent to it
};

}  // namespace

Result<std::unique_ptr<AgentChannel>> AgentChannel::Start(int wire, const ChannelKeys& keys) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    close(wire);
    return Error(ErrorCode::kUnavailable, "connect back", fmt::format("socketpair: {}", std::strerror(errno)));
  }
  fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK);
  fcntl(wire, F_SETFL, fcntl(wire, F_GETFL) | O_NONBLOCK);
  std::unique_ptr<AgentChannel> channel(new AgentChannel());
  channel->mine_ = pair[0];
  channel->pump_ = pair[1];
  channel->wire_ = wire;
  channel->keys_ = keys;
  channel->thread_ = std::thread([c = channel.get()] { c->Pump(); });
  return channel;
}

void AgentChannel::Pump() {
  RecordSealer seal(keys_.to_run);
  RecordOpener open(keys_.to_agent);
  Side wire, local;
  wire.fd = wire_;
  local.fd = pump_;
  std::string buf(kChunk, '\0');
  auto finished = [&] { return !local.reading && (wire.out.empty() || !wire.writable); };
  while (!finished()) {
    if (finishing_ && Clock::now().time_since_epoch().count() > give_up_ns_) break;
    pollfd fds[2] = {{wire.fd, 0, 0}, {local.fd, 0, 0}};
    if (wire.reading && local.out.size() < kBacklog) fds[0].events |= POLLIN;
    if (!wire.out.empty() && wire.writable) fds[0].events |= POLLOUT;
    if (local.reading && wire.out.size() < kBacklog) fds[1].events |= POLLIN;
    if (!local.out.empty() && local.writable) fds[1].events |= POLLOUT;
    if (poll(fds, 2, 100) < 0 && errno != EINTR) break;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR) && wire.reading) {
      ssize_t got = recv(wire.fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) wire.reading = false;
      if (got > 0 && !open.Feed(std::string_view(buf.data(), static_cast<size_t>(got)), local.out)) {
        wire.reading = false;
        std::string_view said = "topolaunch agent: a record from `run` does not authenticate (altered on the way?); stopping\n";
        (void)!write(2, said.data(), said.size());
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR) && local.reading) {
      ssize_t got = recv(local.fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) local.reading = false;
      if (got > 0) seal.Seal(std::string_view(buf.data(), static_cast<size_t>(got)), wire.out);
    }
    if (wire.writable && !wire.out.empty() && !SendSome(wire.fd, wire.out)) wire.writable = false;
    if (!wire.writable) wire.out.clear();  // `run` is gone: what the agent writes goes nowhere
    if (local.writable && !local.out.empty() && !SendSome(local.fd, local.out)) local.writable = false;
    if (!wire.reading && local.out.empty() && !local.shut) {
      shutdown(local.fd, SHUT_WR);  // `run`'s EOF, or nothing more to trust: the agent's stop
      local.shut = true;
    }
  }
  if (wire.writable && !wire.shut) shutdown(wire.fd, SHUT_WR);
}

void AgentChannel::Finish(std::chrono::milliseconds limit) {
  if (!thread_.joinable()) return;
  give_up_ns_ = (Clock::now() + limit).time_since_epoch().count();
  finishing_ = true;
  shutdown(mine_, SHUT_WR);  // the agent's EOF: the pump sends what is left, then EOF
  thread_.join();
  close(mine_);
  close(pump_);
  close(wire_);
}

AgentChannel::~AgentChannel() { Finish(std::chrono::seconds(3)); }

}  // namespace topolaunch
