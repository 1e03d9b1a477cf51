// `topolaunch run` after option parsing: the job's attempts (the restart
// loop, launch/restart_loop.h), each one pass through the stages of
// stages.h: prepare → order → connect → preflight → plan → launch → report.
#pragma once

#include <string>
#include <vector>

#include "run/run_options.h"

namespace topolaunch::run {

/// Runs the job; `script_and_args` is SCRIPT followed by its arguments,
/// exactly as given. With --max-restarts, a failed attempt is followed by
/// another (launch/restart_loop.h says on which nodes). Returns the exit
/// status: 0 every node succeeded, 1 the job failed, 2 bad usage or input,
/// 3 preflight failed (nothing started), 130 interrupted.
int RunJob(const RunOptions& options, const RunContext& context, const std::vector<std::string>& script_and_args);

}  // namespace topolaunch::run
