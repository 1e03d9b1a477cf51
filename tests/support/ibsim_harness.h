// A simulated InfiniBand fabric for tests: ibsim on a net file (ibnetdiscover's
// text format), programs run against it through ibsim-run, its console, and
// optionally OpenSM on top so ports go Active and get LIDs.
//
// Each IbsimFabric has its own IBSIM_SOCKNAME and working directory (umad2sim
// writes ./sys-PID into the client's working directory), so tests can run in
// parallel. Everything is killed with SIGKILL by PID when the object goes
// away, also when the test fails (ibsim ignores SIGTERM).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/fabric_generator.h"  // IbsimLimits
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/result.h"

namespace topolaunch::testing {

struct IbsimOptions {
  IbsimLimits limits;
  std::chrono::milliseconds startup_timeout{30'000};
};

/// A running ibsim. Create with Start(); destroy to stop it.
class IbsimFabric {
 public:
  /// Starts `ibsim -s NETFILE` (without -n, which would turn the console
  /// off) with a fresh socket name and waits (bounded)
  /// until it prints "Network simulator ready." and its control socket takes
  /// connections. Errors: kUnavailable when ibsim is missing or exits (its
  /// log quoted, e.g. a net-file parse error), kTimeout at the limit.
  static Result<std::unique_ptr<IbsimFabric>> Start(const std::string& netfile, const IbsimOptions& options = {});

  /// IBSIM_SOCKNAME shared by ibsim and its clients.
  const std::string& socket_name() const { return socket_name_; }
  /// Working directory of ibsim and of the commands run by Run().
  const std::string& work_dir() const { return dir_.path(); }
  pid_t pid() const { return ibsim_->pid(); }
  /// ibsim's output so far (start-up lines, console replies).
  std::string Log() const { return ibsim_->ReadLog(); }

  /// Runs `ibsim-run ARGV...` in work_dir() with IBSIM_SOCKNAME set (plus
  /// `env`), capturing stdout/stderr, killed at `timeout`.
  ProcessResult Run(std::vector<std::string> argv, std::chrono::milliseconds timeout = std::chrono::seconds(120),
                    std::vector<std::pair<std::string, std::string>> env = {}) const;

  /// Sends one console command ("Unlink \"sw1\"[3]", "PerformanceSet ...")
  /// and returns ibsim's reply (the text before its next "sim> " prompt).
  /// Errors: kUnavailable when ibsim is gone, kTimeout when no prompt comes.
  Result<std::string> Console(const std::string& command, std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  IbsimFabric() = default;
  TempDir dir_;
  std::string socket_name_;
  std::unique_ptr<BackgroundProcess> ibsim_;
};

/// OpenSM running on an IbsimFabric (sweep once, then stay master): ports go
/// Active and get LIDs. Its temp/cache files stay in the fabric's directory.
class OpenSm {
 public:
  /// Starts `ibsim-run opensm -f LOG -s 0` and waits for "Entering MASTER
  /// state" in its log. Errors as for IbsimFabric::Start.
  static Result<std::unique_ptr<OpenSm>> Start(const IbsimFabric& fabric,
                                               std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// opensm's log file.
  const std::string& log_path() const { return log_path_; }

 private:
  OpenSm() = default;
  std::string log_path_;
  std::unique_ptr<BackgroundProcess> opensm_;
};

/// A name no other live test process uses: "tl-PID-N".
std::string UniqueSocketName();

}  // namespace topolaunch::testing
