// One thread per connection. Each thread first takes a connection slot
// (max_parallel_connects overall, max_connects_per_host per sshd), connects, exchanges keys, checks the
// host key and authenticates, then releases the slot: sshd's MaxStartups
// counts only unauthenticated connections, so bounding this phase is enough
// for any number of hosts. A connection dropped during the banner or key
// exchange (MaxStartups' random early drop) is retried with jittered
// exponential backoff; a refused or timed-out connection is not.
//
// After the exec request the thread switches the session to non-blocking
// mode and pumps: stdin data out, stdout/stderr lines to the sink, keepalives,
// and the stop request (EOF on stdin; after the grace period the connection
// is closed). WriteStdin and CloseStdin only queue bytes and the EOF for the
// thread (libssh2 sessions are not thread-safe) and wake it through a pipe.
// While pumping, socket sends go through SendWholePacket (see
// ssh_executor_pump.cc), so a large stdin over a slow link does not break
// the session.
//
// This file holds the threads, the slots and the retries; the set-up of one
// session is in ssh_executor_session.cc, the host-key policy in
// ssh_executor_host_key.cc, the pump in ssh_executor_pump.cc. <libssh2.h>
// comes only through ssh_session_internal.h, which only those files include.
#include "launch/ssh_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "launch/ssh_session_internal.h"

namespace topolaunch {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using ssh_internal::Failure;
using ssh_internal::LastError;
using ssh_internal::LostConnection;
using ssh_internal::Ssh2;
using ssh_internal::Target;

// Bounds connection set-ups: `per_host` at a time to one sshd (MaxStartups
// counts per server, so a cluster of many sshds can take many set-ups at
// once) and `total` over all of them.
class ConnectSlots {
 public:
  ConnectSlots(int total, int per_host) : free_(std::max(1, total)), per_host_(std::max(1, per_host)) {}
  void Acquire(const std::string& server) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return free_ > 0 && busy_[server] < per_host_; });
    --free_;
    ++busy_[server];
  }
  void Release(const std::string& server) {
    {
      std::lock_guard lock(mutex_);
      ++free_;
      if (--busy_[server] == 0) busy_.erase(server);
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int free_;
  const int per_host_;
  std::map<std::string, int> busy_;
};

struct SshExecutorState {
  SshOptions options;
  ConnectSlots connect_slots;
  std::mutex known_hosts_mutex;  // accept-new appends one line at a time
  explicit SshExecutorState(SshOptions o)
      : options(std::move(o)), connect_slots(options.max_parallel_connects, options.max_connects_per_host) {}
};

namespace {

// Runs one libssh2 teardown step to its end. On a non-blocking session a
// step returns EAGAIN while its packet cannot go out (a full socket, a
// peer that floods us), and a free that returns EAGAIN frees nothing. The
// step gets a second; then the socket is shut, so that every send and
// receive fails at once and the step finishes and frees what it holds.
void FinishStep(int fd, bool cut, const std::function<int()>& step) {
  Clock::time_point limit = Clock::now() + milliseconds(1000);
  for (int after_cut = 0; step() == LIBSSH2_ERROR_EAGAIN && fd >= 0 && after_cut < 100; after_cut += cut ? 1 : 0) {
    if (!cut && Clock::now() >= limit) {
      shutdown(fd, SHUT_RDWR);
      cut = true;
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 10);
  }
}

class SshCommand : public RunningCommand {
 public:
  SshCommand(std::shared_ptr<SshExecutorState> state, std::shared_ptr<SerializedSink> sink, size_t index,
             LaunchRequest request)
      : state_(std::move(state)), sink_(std::move(sink)), index_(index), request_(std::move(request)),
        stdin_(!request_.close_stdin) {
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;  // then the pump polls slower
  }
  ~SshCommand() override {
    if (thread_.joinable()) {
      Stop(milliseconds(2000));
      thread_.join();
    }
    if (wake_[0] >= 0) close(wake_[0]), close(wake_[1]);
  }

  // Runs the connection on its own thread; the future says when it started.
  std::future<std::optional<Failure>> Launch(Target target) {
    std::future<std::optional<Failure>> started = started_.get_future();
    thread_ = std::thread([this, target = std::move(target)] { Run(target); });
    return started;
  }

  std::optional<ExitInfo> Wait(milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    if (!done_.wait_for(lock, timeout, [this] { return info_.has_value(); })) return std::nullopt;
    return info_;
  }

  ExitInfo Stop(milliseconds grace) override {
    {
      std::lock_guard lock(mutex_);
      if (!stop_deadline_) stop_deadline_ = Clock::now() + grace;
    }
    stdin_.MarkClosed();
    WakePump();
    return *Wait(std::chrono::hours(24));
  }

  Status WriteStdin(std::string_view data) override {
    if (!stdin_.Append(data)) {
      std::lock_guard lock(mutex_);
      return Error(ErrorCode::kUnavailable, request_.host, info_ ? "the command has ended" : "its stdin is closed");
    }
    WakePump();
    return Ok{};
  }

  void CloseStdin() override {
    stdin_.RequestClose();
    WakePump();
  }

 private:
  void Run(const Target& target);
  std::optional<Failure> Exec(const std::string& line);
  ExitInfo Pump();
  void Emit(OutputStream stream, std::string_view line) { sink_->Emit(index_, stream, line); }
  void Finish(ExitInfo info) {
    std::lock_guard lock(mutex_);
    info_ = std::move(info);
    stdin_.MarkClosed();
    done_.notify_all();
  }
  // A full pipe already means "wake up".
  void WakePump() {
    if (wake_[1] >= 0) (void)!write(wake_[1], "", 1);
  }
  // Frees the channel and the session. `cut`: the connection was given up
  // or lost, so the socket is shut first (see FinishStep).
  void Close(bool cut = false) {
    if (cut && fd_ >= 0) shutdown(fd_, SHUT_RDWR);
    if (channel_) FinishStep(fd_, cut, [this] { return Ssh2().channel_free(channel_); }), channel_ = nullptr;
    if (session_) {
      FinishStep(fd_, cut, [this] {
        return Ssh2().session_disconnect_ex(session_, SSH_DISCONNECT_BY_APPLICATION, "topolaunch: done", "");
      });
      FinishStep(fd_, cut, [this] { return Ssh2().session_free(session_); }), session_ = nullptr;
    }
    if (fd_ >= 0) close(fd_), fd_ = -1;
  }

  std::shared_ptr<SshExecutorState> state_;
  std::shared_ptr<SerializedSink> sink_;
  size_t index_;
  LaunchRequest request_;
  std::thread thread_;
  std::promise<std::optional<Failure>> started_;
  int fd_ = -1;
  LIBSSH2_SESSION* session_ = nullptr;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<ExitInfo> info_;
  std::optional<Clock::time_point> stop_deadline_;
  int wake_[2] = {-1, -1};        // WriteStdin/CloseStdin/Stop -> pump
  StdinQueue stdin_;              // WriteStdin/CloseStdin -> pump
};

std::optional<Failure> SshCommand::Exec(const std::string& line) {
  channel_ = Ssh2().channel_open_ex(session_, "session", sizeof("session") - 1, LIBSSH2_CHANNEL_WINDOW_DEFAULT,
                                    LIBSSH2_CHANNEL_PACKET_DEFAULT, nullptr, 0);
  if (!channel_) return Failure{ErrorCode::kUnavailable, "cannot open a session channel: " + LastError(session_)};
  if (Ssh2().channel_process_startup(channel_, "exec", sizeof("exec") - 1, line.c_str(),
                                     static_cast<unsigned>(line.size())) != 0)
    return Failure{ErrorCode::kUnavailable, "the exec request was refused: " + LastError(session_)};
  return std::nullopt;
}

void SshCommand::Run(const Target& target) {
  const SshOptions& options = state_->options;
  Result<std::string> line = RenderShellCommand(request_.command);
  if (!line.ok()) {
    started_.set_value(Failure{ErrorCode::kBadInput, line.error().Message()});
    return Finish(LostConnection());
  }
  std::optional<Failure> failure;
  std::mt19937 random(std::random_device{}());
  milliseconds delay = options.retry_backoff;
  for (int attempt = 1; attempt <= std::max(1, options.connect_attempts); ++attempt) {
    std::string server = fmt::format("{}:{}", target.address, target.port);
    state_->connect_slots.Acquire(server);
    failure = ssh_internal::OpenSession(target, options, state_->known_hosts_mutex, fd_, session_);
    state_->connect_slots.Release(server);
    if (!failure || !failure->retry || attempt == options.connect_attempts) break;
    Close();
    std::uniform_int_distribution<long> jitter(delay.count() / 2, delay.count() * 3 / 2);
    std::this_thread::sleep_for(milliseconds(jitter(random)));
    delay *= 2;
  }
  if (!failure) failure = Exec(*line);
  started_.set_value(failure);
  if (failure) {
    Close();
    return Finish(LostConnection());
  }
  ExitInfo info = Pump();
  Close(info.connection_lost);
  Finish(info);
}

ExitInfo SshCommand::Pump() {
  ssh_internal::PumpEnds ends;
  ends.session = session_;
  ends.channel = channel_;
  ends.socket_fd = fd_;
  ends.wake_fd = wake_[0];
  ends.keepalive_interval_s = state_->options.keepalive_interval_s;
  ends.stdin_queue = &stdin_;
  ends.stop_deadline = [this] {
    std::lock_guard lock(mutex_);
    return stop_deadline_;
  };
  ends.emit = [this](OutputStream stream, std::string_view line) { Emit(stream, line); };
  return ssh_internal::PumpChannel(ends, request_.stdin_data, request_.close_stdin);
}

Target ResolveTarget(const std::string& host, const SshOptions& options) {
  SshHostSettings settings = ResolveSshHost(options.config, host, options.home, options.local_user);
  Target target;
  target.alias = host;
  target.address = settings.host_name.value_or(host);
  target.user = settings.user.value_or(options.local_user);
  target.port = settings.port.value_or(22);
  target.identity_files = settings.identity_files;
  target.identity_files.insert(target.identity_files.end(), options.identity_files.begin(), options.identity_files.end());
  return target;
}

}  // namespace

SshExecutor::SshExecutor(SshOptions options) : state_(std::make_shared<SshExecutorState>(std::move(options))) {}

SshExecutor::~SshExecutor() = default;

std::vector<StartResult> SshExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  auto shared_sink = std::make_shared<SerializedSink>();
  shared_sink->sink = std::move(sink);
  std::vector<std::unique_ptr<SshCommand>> commands;
  std::vector<std::future<std::optional<Failure>>> started;
  std::vector<StartResult> results;
  std::vector<Target> targets;
  for (size_t i = 0; i < requests.size(); ++i) {
    targets.push_back(ResolveTarget(requests[i].host, state_->options));
    commands.push_back(std::make_unique<SshCommand>(state_, shared_sink, i, requests[i]));
    if (Status host = CheckRemoteHost(requests[i].host); !host.ok()) {
      commands.back().reset();
      started.emplace_back();
      continue;
    }
    started.push_back(commands.back()->Launch(targets.back()));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!commands[i]) {
      results.push_back(CheckRemoteHost(requests[i].host).error());
      continue;
    }
    std::optional<Failure> failure = started[i].get();
    if (failure) {
      std::string where = targets[i].user + "@" + targets[i].Where();
      results.push_back(Error(failure->code, where, failure->what));
    } else {
      results.push_back(std::unique_ptr<RunningCommand>(std::move(commands[i])));
    }
  }
  return results;
}

}  // namespace topolaunch
