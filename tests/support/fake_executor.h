// A recording Executor for pure tests of orchestration code: it remembers
// every request, everything written to each host's stdin and every Stop,
// plays scripted output and exit statuses, and starts nothing.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch/executor.h"

namespace topolaunch::testing {

class FakeExecutor : public Executor {
 public:
  /// What a host does when started. A command "may end" at its start, or
  /// at its first WriteStdin when wait_for_write; it then ends `run_time`
  /// later with `exit`, unless runs_until_stopped. Stop on a running
  /// command ends it with signal TERM; CloseStdin ends it with exit 0 when
  /// it still waits for a write or runs until stopped (what an agent does on
  /// EOF). A request with close_stdin has its stdin closed at the start,
  /// like the real executors: WriteStdin then fails, and a wait_for_write
  /// command ends at once with exit 0.
  struct Script {
    std::vector<std::pair<OutputStream, std::string>> lines;  ///< emitted during StartAll
    ExitInfo exit{.exit_code = 0};                             ///< returned by Wait once ended
    std::optional<Error> start_error;                          ///< fail StartAll for this host
    bool runs_until_stopped = false;                           ///< Wait times out until Stop or CloseStdin
    /// Emitted through the sink, synchronously, on the first WriteStdin.
    std::vector<std::pair<OutputStream, std::string>> on_write_lines;
    /// Emitted through the sink, synchronously, when the command is
    /// destroyed (as srun's last words reach the srun executor's sink when
    /// the step ends with its last node's command).
    std::vector<std::pair<OutputStream, std::string>> on_destroy_lines;
    bool wait_for_write = false;           ///< does not end before a WriteStdin (an agent awaiting its launch)
    std::chrono::milliseconds run_time{0}; ///< how long it runs once it may end
  };

  /// Scripts `host`; unscripted hosts print nothing and exit 0.
  void SetScript(const std::string& host, Script script) { scripts_[host] = std::move(script); }

  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;

  /// Every request started so far, in order.
  std::vector<LaunchRequest> requests() const;
  /// Hosts whose command was stopped (Stop called while running), in order.
  std::vector<std::string> stopped() const;
  /// What `host`'s commands got on stdin: stdin_data, then every accepted
  /// WriteStdin, concatenated. "" for a host never started.
  std::string stdin_written(const std::string& host) const;
  /// Whether `host`'s stdin was closed (close_stdin or CloseStdin).
  bool stdin_closed(const std::string& host) const;

 private:
  friend class FakeCommand;
  void RecordStop(const std::string& host);
  void RecordStdin(const std::string& host, std::string_view data, bool closed);
  std::map<std::string, Script> scripts_;
  mutable std::mutex mutex_;
  std::vector<LaunchRequest> requests_;
  std::vector<std::string> stopped_;
  std::map<std::string, std::string> stdin_written_;
  std::map<std::string, bool> stdin_closed_;
};

}  // namespace topolaunch::testing
