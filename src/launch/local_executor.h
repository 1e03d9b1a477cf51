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

}  // namespace topolaunch
