// LocalExecutor: runs commands on this machine (the host is ignored). The
// only file that forks and execs commands for launching.
#pragma once

#include "launch/executor.h"

namespace topolaunch {

/// Starts each request as a child in its own process group, its stdin,
/// stdout and stderr on pipes pumped by one thread per child. The children
/// inherit this process's environment with the request's env set on top.
/// A program that cannot be executed fails its StartResult (kUnavailable,
/// naming the program and the errno text).
class LocalExecutor : public Executor {
 public:
  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;
};

/// Replaces this process with `command` (execvp: argv[0] looked up in PATH),
/// its env set on top of ours, in its cwd when given; the PID, open files and
/// signal mask stay, so a parent that signals this PID reaches the program.
/// Returns only on failure: kUnavailable naming the program (or the cwd)
/// and the errno text; kBadInput for an empty argv.
Status ReplaceProcess(const Command& command);

}  // namespace topolaunch
