// A recording Executor for pure tests of orchestration code: it remembers
// every request and every Stop, plays scripted output and exit statuses,
// and starts nothing.
#pragma once

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
  /// What a host does when started.
  struct Script {
    std::vector<std::pair<OutputStream, std::string>> lines;  ///< emitted during StartAll
    ExitInfo exit{.exit_code = 0};                             ///< returned by Wait once ended
    std::optional<Error> start_error;                          ///< fail StartAll for this host
    bool runs_until_stopped = false;                           ///< Wait times out until Stop
  };

  /// Scripts `host`; unscripted hosts print nothing and exit 0.
  void SetScript(const std::string& host, Script script) { scripts_[host] = std::move(script); }

  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;

  /// Every request started so far, in order.
  std::vector<LaunchRequest> requests() const;
  /// Hosts whose command was stopped (Stop called while running), in order.
  std::vector<std::string> stopped() const;

 private:
  friend class FakeCommand;
  void RecordStop(const std::string& host);
  std::map<std::string, Script> scripts_;
  mutable std::mutex mutex_;
  std::vector<LaunchRequest> requests_;
  std::vector<std::string> stopped_;
};

}  // namespace topolaunch::testing
