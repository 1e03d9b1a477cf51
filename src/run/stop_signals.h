// Ctrl-C, SIGTERM (scancel, a prolog timeout) and SIGHUP (the login session
// closing) all mean "stop every node": the handler only raises a flag, and
// `run`'s session and restart wait read it.
#pragma once

#include <atomic>

namespace topolaunch::run {

/// Installs the handlers (calling it again changes nothing) and ignores
/// SIGPIPE (a closed pipe is a write error, not the end of the job).
void CatchStopSignals();

/// Raised by any of those signals; never lowered.
const std::atomic<bool>& StopRequested();

}  // namespace topolaunch::run
