#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace topolaunch::testing {

namespace {

using Clock = std::chrono::steady_clock;

// Everything the child needs, built before fork: after fork in a threaded
// process only async-signal-safe calls are allowed.
struct ExecPlan {
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  std::string cwd;

  explicit ExecPlan(const ProcessSpec& spec) : args(spec.argv), cwd(spec.cwd) {
    for (char** e = environ; *e; ++e) {
      std::string_view entry(*e);
      bool overridden = false;
      for (const auto& [key, value] : spec.env)
        if (entry.substr(0, entry.find('=')) == key) overridden = true;
      if (!overridden) env.emplace_back(entry);
    }
    for (const auto& [key, value] : spec.env) env.push_back(key + "=" + value);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }

  // In the child: never returns.
  [[noreturn]] void Exec(int in_fd, int out_fd, int err_fd, bool die_with_parent) {
    setpgid(0, 0);
    if (die_with_parent) prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
};

void Decode(int status, int& exit_code, int& term_signal) {
  if (WIFEXITED(status)) exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) term_signal = WTERMSIG(status);
}

// Reads both pipes until they close or the deadline passes.
bool Drain(int out_fd, int err_fd, std::string& out, std::string& err, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    int n = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  return true;
}

}  // namespace

std::string Tail(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return "..." + std::string(text.substr(text.size() - max_chars));
}

std::string ProcessResult::Describe() const {
  std::string status = timed_out ? "timed out" : term_signal ? fmt::format("killed by signal {}", term_signal)
                                                             : fmt::format("exit {}", exit_code);
  return fmt::format("{} after {:.2f}s; stderr: {}", status, seconds, Tail(err));
}

ProcessResult RunProcess(const ProcessSpec& spec) {
  ProcessResult result;
  ExecPlan plan(spec);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return result;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]), close(out_pipe[1]);
    return result;
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  Clock::time_point start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) plan.Exec(devnull, out_pipe[1], err_pipe[1], true);
  close(out_pipe[1]), close(err_pipe[1]), close(devnull);
  if (pid < 0) {
    close(out_pipe[0]), close(err_pipe[0]);
    result.err = std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);  // also here, so the kill below cannot race the child's own call
  bool finished = Drain(out_pipe[0], err_pipe[0], result.out, result.err, start + spec.timeout);
  if (!finished) {
    kill(-pid, SIGKILL);
    result.timed_out = true;
  }
  close(out_pipe[0]), close(err_pipe[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {}
  Decode(status, result.exit_code, result.term_signal);
  result.max_rss_kb = usage.ru_maxrss;
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  result.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  // Whatever the child left running in its group goes too.
  kill(-pid, SIGKILL);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

Result<std::unique_ptr<BackgroundProcess>> BackgroundProcess::Start(const ProcessSpec& spec, const std::string& log_path) {
  std::unique_ptr<BackgroundProcess> self(new BackgroundProcess);
  self->log_path_ = log_path;
  self->name_ = spec.argv.empty() ? "?" : spec.argv[0];
  ExecPlan plan(spec);
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Error(ErrorCode::kUnavailable, log_path, std::strerror(errno));
  int in_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) {
    close(log_fd);
    return Error(ErrorCode::kUnavailable, self->name_, std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid == 0) plan.Exec(in_pipe[0], log_fd, log_fd, true);
  close(in_pipe[0]), close(log_fd);
  if (pid < 0) {
    close(in_pipe[1]);
    return Error(ErrorCode::kUnavailable, self->name_, std::strerror(errno));
  }
  setpgid(pid, pid);
  self->pid_ = pid;
  self->stdin_fd_ = in_pipe[1];
  return self;
}

BackgroundProcess::~BackgroundProcess() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (pid_ > 0) {
    // ibsim ignores SIGTERM: SIGKILL, to the whole group.
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  }
}

bool BackgroundProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_status_ = status;
  pid_ = -1;
  return false;
}

bool BackgroundProcess::WriteStdin(std::string_view text) {
  if (stdin_fd_ < 0) return false;
  // A dead reader must give EPIPE here, not kill the test with SIGPIPE.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  bool ok = true;
  while (ok && !text.empty()) {
    ssize_t n = write(stdin_fd_, text.data(), text.size());
    if (n > 0) text.remove_prefix(static_cast<size_t>(n));
    else if (errno != EINTR) ok = false;
  }
  sigaction(SIGPIPE, &previous, nullptr);
  return ok;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status BackgroundProcess::WaitForLog(std::string_view needle, std::chrono::milliseconds timeout) {
  return WaitForFileText(log_path_, needle, timeout);
}

Status BackgroundProcess::WaitForFileText(const std::string& path, std::string_view needle,
                                          std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (ReadFile(path).find(needle) != std::string::npos) return Ok{};
    if (!Running())
      return Error(ErrorCode::kUnavailable, name_,
                   fmt::format("exited (status {:#x}) before writing '{}' to {}; its output: {}", exit_status_, needle,
                               path, Tail(ReadLog() + ReadFile(path))));
    if (Clock::now() >= deadline)
      return Error(ErrorCode::kTimeout, name_,
                   fmt::format("did not write '{}' to {} within {} ms; its output: {}", needle, path, timeout.count(),
                               Tail(ReadLog() + ReadFile(path))));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace topolaunch::testing
