// The SSH executor's channel pump, run on the command's own thread once the
// exec request is accepted. The session is non-blocking here, so every step
// returns at once (EAGAIN) when it cannot go on; one pass of the loop
// writes stdin, sends the EOF when it is due, reads stdout and stderr (dry,
// or a bounded amount: a flood must not starve the rest),
// sends a keepalive when one is due, then waits for the socket or for a
// wake-up from WriteStdin/CloseStdin/Stop. Once the channel reaches EOF
// the pump closes it and collects the exit status.
#include "launch/ssh_session_internal.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace topolaunch::ssh_internal {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// libssh2 1.10 cannot send a packet while another is half sent: the next
// send of any other packet (EOF, a keepalive, the window adjustment inside
// a channel read) fails with LIBSSH2_ERROR_BAD_USE, and a half-sent
// keepalive is never finished at all. In non-blocking mode a half-sent
// packet happens whenever the socket buffer fills (a slow link). So the
// pump's sends wait for room until the packet is out; sshd keeps reading
// its socket whatever the channel windows say, so this waits only for the
// network, and gives up (leaving the packet half sent) after kSendStall.
constexpr milliseconds kSendStall{10'000};

LIBSSH2_SEND_FUNC(SendWholePacket) {
  (void)abstract;
  const char* bytes = static_cast<const char*>(buffer);
  size_t sent = 0;
  Clock::time_point limit = Clock::now() + kSendStall;
  while (sent < length) {
    ssize_t n = send(socket, bytes + sent, length - sent, flags);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      int error = errno;
      return sent ? static_cast<ssize_t>(sent) : -error;
    }
    auto left = std::chrono::duration_cast<milliseconds>(limit - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{socket, POLLOUT, 0};
    poll(&p, 1, static_cast<int>(std::min<long>(left, 100)));
  }
  return sent ? static_cast<ssize_t>(sent) : -EAGAIN;
}

class ChannelPump {
 public:
  ChannelPump(const PumpEnds& ends, std::string stdin_data, bool close_stdin)
      : ends_(ends), data_(std::move(stdin_data)), close_stdin_(close_stdin) {}
  ExitInfo Run();

 private:
  bool WriteStdin(bool stopping);
  void SendEofWhenDue(bool stopping);
  bool ReadOutput();
  void SendKeepalive();
  void FlushOutput();
  ExitInfo CloseAndCollectExit();
  void WaitSocket(int timeout_ms);

  const PumpEnds& ends_;
  std::string data_;  // stdin; its first written_ bytes are sent
  size_t written_ = 0;
  bool close_stdin_;
  bool eof_sent_ = false;
  bool lost_ = false;
  LineSplitter splitters_[2];  // stdout, stderr
  char buf_[32768];
};

ExitInfo ChannelPump::Run() {
  void* plain_send =
      Ssh2().session_callback_set(ends_.session, LIBSSH2_CALLBACK_SEND, reinterpret_cast<void*>(&SendWholePacket));
  Ssh2().session_set_blocking(ends_.session, 0);
  bool forced = false;
  while (!lost_) {
    std::optional<Clock::time_point> deadline = ends_.stop_deadline();
    close_stdin_ |= ends_.stdin_queue->TakeInto(data_, written_);
    if (deadline && Clock::now() >= *deadline) {
      forced = true;
      break;
    }
    bool more_to_write = WriteStdin(deadline.has_value());  // wrote a packet and have more: no pause
    SendEofWhenDue(deadline.has_value());
    bool more_to_read = ReadOutput();
    if (lost_ || Ssh2().channel_eof(ends_.channel)) break;
    SendKeepalive();
    WaitSocket(more_to_write || more_to_read ? 0 : 50);
  }
  ends_.stdin_queue->MarkClosed();
  FlushOutput();
  if (lost_ || forced) {
    // Closing a stuck connection must not wait for the network.
    Ssh2().session_callback_set(ends_.session, LIBSSH2_CALLBACK_SEND, plain_send);
    return LostConnection();
  }
  return CloseAndCollectExit();
}

// True when it wrote a packet and more is left. Once stopping, nothing more
// is written: the EOF goes out instead.
bool ChannelPump::WriteStdin(bool stopping) {
  if (written_ >= data_.size() || stopping) return false;
  ssize_t n = Ssh2().channel_write_ex(ends_.channel, 0, data_.data() + written_, data_.size() - written_);
  if (n > 0) {
    written_ += static_cast<size_t>(n);
    return written_ < data_.size();
  }
  if (n != LIBSSH2_ERROR_EAGAIN && n != 0) lost_ = true;  // 0: no window yet
  return false;
}

void ChannelPump::SendEofWhenDue(bool stopping) {
  bool want_eof = stopping || (written_ == data_.size() && close_stdin_);
  if (!want_eof || eof_sent_) return;
  int rc = Ssh2().channel_send_eof(ends_.channel);
  if (rc == 0) {
    eof_sent_ = true;
    ends_.stdin_queue->MarkClosed();
  } else if (rc != LIBSSH2_ERROR_EAGAIN) {
    lost_ = true;
  }
}

// Reads at most kReadsPerPass buffers of each stream, so that a command
// that writes without pause still leaves every pass time for stdin (the
// heartbeats), the EOF, keepalives and the stop deadline. True when the
// budget ran out before the stream was dry.
bool ChannelPump::ReadOutput() {
  constexpr int kReadsPerPass = 8;
  bool more = false;
  for (int stream = 0; stream < 2 && !lost_; ++stream) {
    for (int reads = 0;; ++reads) {
      if (reads == kReadsPerPass) {
        more = true;
        break;
      }
      ssize_t n = Ssh2().channel_read_ex(ends_.channel, stream, buf_, sizeof buf_);
      if (n == LIBSSH2_ERROR_EAGAIN || n == 0) break;
      if (n < 0) {
        lost_ = true;
        break;
      }
      auto kind = stream == 0 ? OutputStream::kStdout : OutputStream::kStderr;
      splitters_[stream].Feed({buf_, static_cast<size_t>(n)}, [&](std::string_view l) { ends_.emit(kind, l); });
    }
  }
  return more;
}

void ChannelPump::SendKeepalive() {
  int next_keepalive = 0;
  if (ends_.keepalive_interval_s > 0 &&
      Ssh2().keepalive_send(ends_.session, &next_keepalive) != 0 &&
      Ssh2().session_last_errno(ends_.session) != LIBSSH2_ERROR_EAGAIN)
    lost_ = true;
}

void ChannelPump::FlushOutput() {
  for (int stream = 0; stream < 2; ++stream) {
    auto kind = stream == 0 ? OutputStream::kStdout : OutputStream::kStderr;
    splitters_[stream].Flush([&](std::string_view l) { ends_.emit(kind, l); });
  }
}

ExitInfo ChannelPump::CloseAndCollectExit() {
  // The exit status may follow the EOF: wait (briefly) for the channel close.
  Clock::time_point limit = Clock::now() + std::chrono::seconds(5);
  int rc;
  while ((rc = Ssh2().channel_close(ends_.channel)) == LIBSSH2_ERROR_EAGAIN && Clock::now() < limit) WaitSocket(50);
  while ((rc = Ssh2().channel_wait_closed(ends_.channel)) == LIBSSH2_ERROR_EAGAIN && Clock::now() < limit) WaitSocket(50);
  if (rc != 0) return LostConnection();
  ExitInfo info;
  char* signal_name = nullptr;
  size_t signal_len = 0;
  Ssh2().channel_get_exit_signal(ends_.channel, &signal_name, &signal_len, nullptr, nullptr, nullptr, nullptr);
  if (signal_name) {
    info.signal.assign(signal_name, signal_len);
    Ssh2().free(ends_.session, signal_name);
  } else {
    info.exit_code = Ssh2().channel_get_exit_status(ends_.channel);
  }
  return info;
}

void ChannelPump::WaitSocket(int timeout_ms) {
  int directions = Ssh2().session_block_directions(ends_.session);
  short events = POLLIN;  // always read: the peer may send data or close
  if (directions & LIBSSH2_SESSION_BLOCK_OUTBOUND) events |= POLLOUT;
  pollfd p[2] = {{ends_.socket_fd, events, 0}, {ends_.wake_fd, POLLIN, 0}};
  poll(p, 2, timeout_ms);
  char drain[64];
  if (p[1].revents & POLLIN)
    while (read(ends_.wake_fd, drain, sizeof drain) > 0) {}
}

}  // namespace

ExitInfo PumpChannel(const PumpEnds& ends, std::string stdin_data, bool close_stdin) {
  return ChannelPump(ends, std::move(stdin_data), close_stdin).Run();
}

}  // namespace topolaunch::ssh_internal
