// Child processes for tests: run-to-completion with captured output and a
// time limit, or left running in the background (ibsim, opensm) and killed
// by the destructor. Every child gets its own process group, so a timeout
// or a destructor kills everything it started, and background children die
// with the test process (PR_SET_PDEATHSIG), so a crashed test leaves nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch::testing {

/// A whole file, "" when it cannot be read.
std::string ReadFile(const std::string& path);

/// What to start: argv[0] is looked up in PATH.
struct ProcessSpec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  ///< set on top of ours
  std::string cwd;                                       ///< empty: ours
  std::chrono::milliseconds timeout{60'000};             ///< RunProcess only
};

/// How a finished child ended.
struct ProcessResult {
  int exit_code = -1;     ///< exit status; -1 when it died of a signal or did not start
  int term_signal = 0;    ///< the signal that ended it, 0 if none
  bool timed_out = false; ///< killed (with its process group) at the time limit
  std::string out;
  std::string err;
  double seconds = 0;     ///< wall time from start to end
  long max_rss_kb = 0;    ///< the child's peak resident set (wait4's ru_maxrss)
  /// CPU (user + system) of the child and the descendants it waited for.
  double cpu_seconds = 0;
  /// One line for test failure messages: status, then stderr's tail.
  std::string Describe() const;
};

/// Runs a child to completion, capturing stdout and stderr; at spec.timeout
/// the child's whole process group gets SIGKILL and timed_out is set.
ProcessResult RunProcess(const ProcessSpec& spec);

/// A child left running, with stdout and stderr going to a log file and
/// stdin a pipe held by this object. The destructor kills its process group
/// with SIGKILL and reaps it.
class BackgroundProcess {
 public:
  /// Errors: kUnavailable when fork or the log file fail. A program that
  /// cannot be exec'd shows up as an early exit (127) in WaitForLog.
  static Result<std::unique_ptr<BackgroundProcess>> Start(const ProcessSpec& spec, const std::string& log_path);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  /// False once the child has exited (it is then reaped).
  bool Running();
  /// Writes to the child's stdin; false when it is gone.
  bool WriteStdin(std::string_view text);
  /// The log so far ("" if unreadable).
  std::string ReadLog() const { return ReadFile(log_path_); }
  /// Waits until the log holds `needle`. Errors: kUnavailable when the child
  /// exits first, kTimeout at the limit; both quote the log's tail.
  Status WaitForLog(std::string_view needle, std::chrono::milliseconds timeout);
  /// The same for another file the child writes (a log named on its command
  /// line); a file that does not exist yet reads as empty.
  Status WaitForFileText(const std::string& path, std::string_view needle, std::chrono::milliseconds timeout);

 private:
  BackgroundProcess() = default;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int exit_status_ = -1;
  std::string log_path_;
  std::string name_;
};

/// The last `max_chars` of a text, for messages.
std::string Tail(std::string_view text, size_t max_chars = 600);

}  // namespace topolaunch::testing
