// What runs on this machine, read from /proc, for tests that check that a
// secret is on no command line or that no process of a job is left; and a
// poll loop for conditions that become true in time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace topolaunch::testing {

/// The arguments of process `pid` (/proc/PID/cmdline); empty when it is gone.
std::vector<std::string> Cmdline(pid_t pid);

/// The parent of process `pid` (/proc/PID/stat), -1 when it is gone.
pid_t ParentPid(pid_t pid);

/// Every process id in /proc.
std::vector<pid_t> AllPids();

/// The processes whose command line holds `needle`, as "pid N: ARGS".
std::vector<std::string> CommandLinesHolding(const std::string& needle);

/// Polls `done` every 100 ms until it holds (true) or `limit` passes (false).
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit);

}  // namespace topolaunch::testing
