// Each child runs in a process group of its own (setpgid in both parent and
// child, so a signal sent right after fork cannot miss), which is what Stop
// signals: SIGTERM to the group, SIGKILL after the grace period. A
// close-on-exec pipe reports an exec failure back to StartAll. One pump
// thread per child writes stdin, splits stdout/stderr into lines and reaps
// the child; it stops reading once the child has exited and its pipes are
// drained, so a background grandchild holding the pipes cannot hang Wait.
// WriteStdin only appends to an outbox and wakes the pump through a pipe;
// the pump writes the bytes when the child's stdin pipe has room, so a slow
// reader never blocks the caller.
#include "launch/local_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;

// Built before fork: after fork only async-signal-safe calls are allowed.
struct ExecPlan {
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  explicit ExecPlan(const Command& command) : args(command.argv) {
    for (char** e = environ; *e; ++e) {
      std::string_view entry(*e);
      std::string_view name = entry.substr(0, entry.find('='));
      bool overridden = std::find(command.unset.begin(), command.unset.end(), name) != command.unset.end();
      for (const auto& [key, value] : command.env) overridden |= name == key;
      if (!overridden) env.emplace_back(entry);
    }
    for (const auto& [key, value] : command.env) env.push_back(key + "=" + value);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
};

ExitInfo Decode(int status) {
  ExitInfo info;
  if (WIFEXITED(status)) info.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    info.signal = name ? name : fmt::format("{}", WTERMSIG(status));
  }
  return info;
}

class LocalCommand : public RunningCommand {
 public:
  LocalCommand(std::string where, pid_t pid, int in_fd, int out_fd, int err_fd, const int wake[2], size_t index,
               std::string stdin_data, bool close_stdin, std::shared_ptr<SerializedSink> sink)
      : where_(std::move(where)), pid_(pid), wake_{wake[0], wake[1]}, index_(index), sink_(std::move(sink)),
        stdin_(!close_stdin) {
    thread_ = std::thread([=, this, data = std::move(stdin_data)]() mutable {
      Pump(in_fd, out_fd, err_fd, std::move(data), close_stdin);
    });
  }
  ~LocalCommand() override {
    Stop(std::chrono::milliseconds(2000));
    if (thread_.joinable()) thread_.join();
    close(wake_[0]), close(wake_[1]);
  }

  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    if (!done_.wait_for(lock, timeout, [this] { return info_.has_value(); })) return std::nullopt;
    return info_;
  }

  ExitInfo Stop(std::chrono::milliseconds grace) override {
    if (auto info = Wait(std::chrono::milliseconds(0))) return *info;
    kill(-pid_, SIGTERM);
    if (auto info = Wait(grace)) return *info;
    kill(-pid_, SIGKILL);
    return *Wait(std::chrono::hours(24));
  }

  Status WriteStdin(std::string_view data) override {
    if (!stdin_.Append(data)) {
      std::lock_guard lock(mutex_);
      return Error(ErrorCode::kUnavailable, where_, info_ ? "has ended" : "its stdin is closed");
    }
    WakePump();
    return Ok{};
  }

  void CloseStdin() override {
    stdin_.RequestClose();
    WakePump();
  }

  int ProcessId() const override { return pid_; }

 private:
  void Pump(int in_fd, int out_fd, int err_fd, std::string data, bool close_stdin);
  // A full wake pipe already means "wake up".
  void WakePump() { (void)!write(wake_[1], "", 1); }
  void Finish(ExitInfo info) {
    std::lock_guard lock(mutex_);
    info_ = std::move(info);
    done_.notify_all();
  }

  std::string where_;  // the program, for errors
  pid_t pid_;
  int wake_[2];  // WriteStdin/CloseStdin -> pump
  size_t index_;
  std::shared_ptr<SerializedSink> sink_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<ExitInfo> info_;
  StdinQueue stdin_;  // WriteStdin/CloseStdin -> pump
};

void LocalCommand::Pump(int in_fd, int out_fd, int err_fd, std::string data, bool close_stdin) {
  // A child that closed its stdin must give EPIPE, not kill us with SIGPIPE.
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  size_t written = 0;
  LineSplitter splitters[2];
  pollfd fds[4] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, 0, 0}, {wake_[0], POLLIN, 0}};
  auto close_stdin_fd = [&] {
    if (fds[2].fd >= 0) close(fds[2].fd), fds[2].fd = -1;
    stdin_.MarkClosed();
  };
  std::optional<ExitInfo> exited;
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (stdin_.TakeInto(data, written)) close_stdin = true;
    if (fds[2].fd >= 0 && written == data.size() && close_stdin) close_stdin_fd();
    fds[2].events = written < data.size() ? POLLOUT : 0;  // keep it open, ask to write only with bytes to write
    int n = poll(fds, 4, exited ? 0 : 100);
    if (n < 0 && errno != EINTR) break;
    if (exited && n == 0) break;  // exited and nothing left to read right now
    if (fds[3].revents & POLLIN)
      while (read(fds[3].fd, buf, sizeof buf) > 0) {}
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        auto stream = i == 0 ? OutputStream::kStdout : OutputStream::kStderr;
        splitters[i].Feed({buf, static_cast<size_t>(got)}, [&](std::string_view l) { sink_->Emit(index_, stream, l); });
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd), fds[i].fd = -1;
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = written < data.size() ? write(fds[2].fd, data.data() + written, data.size() - written) : -1;
      if (put > 0) written += static_cast<size_t>(put);
      // POLLERR with nothing to write: the reader is gone.
      else if (written == data.size() || (errno != EINTR && errno != EAGAIN)) close_stdin_fd();
    }
    int status = 0;
    if (!exited && waitpid(pid_, &status, WNOHANG) == pid_) exited = Decode(status), close_stdin_fd();
  }
  for (int i = 0; i < 2; ++i) {
    auto stream = i == 0 ? OutputStream::kStdout : OutputStream::kStderr;
    splitters[i].Flush([&](std::string_view l) { sink_->Emit(index_, stream, l); });
    if (fds[i].fd >= 0) close(fds[i].fd);
  }
  close_stdin_fd();
  if (!exited) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    exited = Decode(status);
  }
  timespec zero{};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {}  // drop a pending SIGPIPE
  Finish(*exited);
}

StartResult StartOne(const LaunchRequest& request, size_t index, const std::shared_ptr<SerializedSink>& sink) {
  const std::string where = request.command.argv.empty() ? "command" : request.command.argv[0];
  if (request.command.argv.empty()) return Error(ErrorCode::kBadInput, "command", "empty argv");
  ExecPlan plan(request.command);
  int in[2], out[2], err[2], report[2], wake[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(report, O_CLOEXEC) ||
      pipe2(wake, O_CLOEXEC | O_NONBLOCK))
    return Error(ErrorCode::kUnavailable, where, fmt::format("pipe: {}", std::strerror(errno)));
  const char* cwd = request.command.cwd.empty() ? nullptr : request.command.cwd.c_str();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    // A supervisor may block or ignore signals; its children start clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGHUP, SIGINT}) signal(sig, SIG_DFL);
    dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
    int error = 0;
    if (cwd && chdir(cwd) != 0) error = errno;
    if (!error) execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
    if (!error) error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  int saved = errno;
  close(in[0]), close(out[1]), close(err[1]), close(report[1]);
  if (pid < 0) {
    close(in[1]), close(out[0]), close(err[0]), close(report[0]), close(wake[0]), close(wake[1]);
    return Error(ErrorCode::kUnavailable, where, fmt::format("fork: {}", std::strerror(saved)));
  }
  setpgid(pid, pid);
  int child_error = 0;
  ssize_t got;
  while ((got = read(report[0], &child_error, sizeof child_error)) < 0 && errno == EINTR) {}
  close(report[0]);
  if (got == sizeof child_error) {
    close(in[1]), close(out[0]), close(err[0]), close(wake[0]), close(wake[1]);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    std::string what = cwd ? fmt::format("cannot run in {}: {}", request.command.cwd, std::strerror(child_error))
                           : fmt::format("cannot run: {}", std::strerror(child_error));
    return Error(ErrorCode::kUnavailable, where, what);
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  return std::unique_ptr<RunningCommand>(
      new LocalCommand(where, pid, in[1], out[0], err[0], wake, index, request.stdin_data, request.close_stdin, sink));
}

}  // namespace

std::vector<StartResult> LocalExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  auto shared = std::make_shared<SerializedSink>();
  shared->sink = std::move(sink);
  std::vector<StartResult> results;
  for (size_t i = 0; i < requests.size(); ++i) results.push_back(StartOne(requests[i], i, shared));
  return results;
}

Status ReplaceProcess(const Command& command) {
  if (command.argv.empty()) return Error(ErrorCode::kBadInput, "command", "empty argv");
  if (!command.cwd.empty() && chdir(command.cwd.c_str()) != 0)
    return Error(ErrorCode::kUnavailable, command.argv[0],
                 fmt::format("cannot run in {}: {}", command.cwd, std::strerror(errno)));
  ExecPlan plan(command);
  execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  return Error(ErrorCode::kUnavailable, command.argv[0], fmt::format("cannot run: {}", std::strerror(errno)));
}

}  // namespace topolaunch
