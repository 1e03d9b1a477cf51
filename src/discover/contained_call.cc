// The child writes "<8-byte little-endian length><bytes>" and _exits: no
// atexit handlers, no stdio flushes of the parent's buffers. The parent reads
// with poll until EOF or the deadline, then reaps the child in every case, so
// no zombie and no stray process outlives the call.
#include "discover/contained_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace topolaunch {

namespace {

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunChild(int fd, const std::function<std::string()>& work) {
  std::string answer;
  try {
    answer = work();
  } catch (...) {
    _exit(3);
  }
  uint64_t size = answer.size();
  char header[8];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((size >> (8 * i)) & 0xFF);
  bool ok = WriteAll(fd, header, sizeof header) && WriteAll(fd, answer.data(), answer.size());
  _exit(ok ? 0 : 4);
}

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {} without an answer", WEXITSTATUS(status));
  return "ended without an answer";
}

constexpr size_t kMaxStderrBytes = 4096;

// The last line the child wrote to stderr, as ": line", or "".
std::string LastWords(std::string said) {
  said.resize(std::min(said.size(), kMaxStderrBytes));
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) said.pop_back();
  if (said.empty()) return "";
  std::string line = said.substr(said.rfind('\n') == std::string::npos ? 0 : said.rfind('\n') + 1);
  return ": " + line.substr(0, 300);
}

int WaitChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Result<std::string> CallInChildProcess(const std::function<std::string()>& work, std::chrono::milliseconds timeout) {
  int answer[2], errors[2];
  if (pipe2(answer, O_CLOEXEC) != 0) return Error(ErrorCode::kUnavailable, "pipe", std::strerror(errno));
  if (pipe2(errors, O_CLOEXEC) != 0) {
    int e = errno;
    close(answer[0]);
    close(answer[1]);
    return Error(ErrorCode::kUnavailable, "pipe", std::strerror(e));
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {answer[0], answer[1], errors[0], errors[1]}) close(fd);
    return Error(ErrorCode::kUnavailable, "fork", std::strerror(e));
  }
  if (pid == 0) {
    // A crash in the child is the child's death by that signal, whatever
    // handler this process installed (a sanitizer's turns SIGSEGV into an
    // exit status and a report nobody reads).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
    // What the library says as it dies (an assert's text) comes back in the error.
    dup2(errors[1], STDERR_FILENO);
    close(answer[0]);
    close(errors[0]);
    RunChild(answer[1], work);
  }
  close(answer[1]);
  close(errors[1]);
  std::string received, said;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{answer[0], POLLIN, 0}, {errors[0], POLLIN, 0}};
  char buffer[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (ready <= 0) continue;  // EINTR or no news: re-check the deadline
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // EOF (or an error): that side is done
        close(fds[i].fd);
        fds[i].fd = -1;
        continue;
      }
      std::string& into = i == 0 ? received : said;
      if (i == 0 || said.size() < kMaxStderrBytes) into.append(buffer, static_cast<size_t>(n));
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = WaitChild(pid);
  if (timed_out)
    return Error(ErrorCode::kTimeout, "child process",
                 fmt::format("no answer within {:.1f} s (killed)", static_cast<double>(timeout.count()) / 1000.0));
  uint64_t size = 0;
  if (received.size() >= 8)
    for (int i = 0; i < 8; ++i) size |= static_cast<uint64_t>(static_cast<unsigned char>(received[i])) << (8 * i);
  bool complete = received.size() >= 8 && received.size() - 8 == size;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !complete)
    return Error(ErrorCode::kInternal, "child process", DescribeStatus(status) + LastWords(said));
  return received.substr(8);
}

}  // namespace topolaunch
