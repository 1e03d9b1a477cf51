// What `run` tells people: the preflight verdict (every bad host and why),
// the final summary (per node status, the first failing rank with its last
// lines, wall time), and the `--dry-run` listing. Pure text from values.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "launch/launch_message.h"
#include "launch/run_session.h"
#include "topolaunch/plan.h"

namespace topolaunch {

/// The worker torchrun names as the root cause of its failure.
struct TorchrunRootCause {
  int rank = -1;          ///< global rank; -1 when only the local rank is known
  int local_rank = -1;
  std::string exit_code;  ///< as torchrun prints it ("3", "-9")
  bool operator==(const TorchrunRootCause&) const = default;
};

/// Finds torchrun's "Root Cause (first observed failure)" block in a node's
/// last lines (torch 1.13 and 2.x print `rank : 2 (local_rank: 0)` and
/// `exitcode : 3 (pid: ...)` under it), else its earlier log line
/// `failed (exitcode: 3) local_rank: 0 (pid: ...)` (rank unknown then).
std::optional<TorchrunRootCause> FindTorchrunRootCause(const std::deque<std::string>& lines);

/// The lines the user wants to see from a failed node: the failing rank's
/// last `count` (tail lines "RANK: text") when it wrote any, else the last
/// `count` before torchrun's own error report (its traceback), else the last `count`.
std::vector<std::string> LastWorkerLines(const std::deque<std::string>& lines, size_t count, int failed_rank = -1);

/// One line per bad host: "node3: torchrun not found in PATH of node3".
/// `problems[i]` belongs to `nodes[i]`; hosts without problems are left out.
std::string FormatPreflightProblems(const std::vector<SessionNode>& nodes,
                                    const std::vector<std::vector<std::string>>& problems);

/// The summary after a run: a table of nodes (rank range, status, who
/// stopped whom), the first failure with its root cause and last lines,
/// and the verdict with the wall time.
std::string FormatRunSummary(const Plan& plan, const SessionReport& report, std::chrono::milliseconds wall);

/// `--dry-run`: per node, the exact command (shell-quoted, as the agent
/// execs it) and the environment it gets, secret values masked.
std::string FormatDryRun(const Plan& plan, const std::vector<LaunchMessage>& messages);

}  // namespace topolaunch
