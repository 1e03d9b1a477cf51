// Running third-party parsing code where its crash cannot take us down.
//
// libhwloc 2.9 dies with SIGSEGV on some damaged XML files (lstopo does too),
// and one bad export among a cluster's hundreds must not end `discover`. The
// work runs in a forked child that hands its answer back through a pipe; a
// child that dies by a signal, exits without answering, or outlives its time
// (then killed) becomes an Error the caller words for its file.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "topolaunch/result.h"

namespace topolaunch {

/// Runs `work` in a forked child process (no exec: the child has a copy of
/// this process) and returns the bytes it returned. `work` must not rely on
/// other threads of this process. Its stderr is captured, not shown. Errors:
/// kInternal when the child died by a signal or exited without a full answer
/// ("killed by signal 6 (Aborted): memattrs.c:923: ... Assertion ... failed."
/// — the last line it wrote to stderr), kTimeout when it ran past `timeout` (it is killed
/// and reaped), kUnavailable when no child could be made. Never throws.
Result<std::string> CallInChildProcess(const std::function<std::string()>& work, std::chrono::milliseconds timeout);

}  // namespace topolaunch
