// Restarts (`run --max-restarts`): what ended an attempt, and the record
// of every attempt for the summary.
//
// What failed decides what happens next. A node is *lost* when the
// launcher lost its agent -- the connection dropped, the agent (or its ssh
// or srun) was killed, or, on a restart, its preflight failed: that node
// is dropped for the rest of the run and a spare takes its place. A
// *worker failure* is a non-zero exit on a node whose agent reported it
// normally: the node is healthy, and the job restarts on the same nodes.
// Nodes that `run` itself stopped (because another failed) are neither.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launch/run_session.h"

namespace topolaunch {

/// True when `outcome` means the node itself was lost (not stopped by us,
/// not a worker's exit status reported by a live agent).
bool NodeLost(const NodeOutcome& outcome);

/// What ended a failed attempt.
struct AttemptFailure {
  std::vector<size_t> lost;           ///< nodes lost, in node order
  std::optional<size_t> worker_node;  ///< the first node whose worker failed, when no node was lost
  std::string what;                   ///< one line: "node3 lost: connection lost"
  bool operator==(const AttemptFailure&) const = default;
};

/// Classifies a failed attempt from its report. `report.first_failure`
/// names the node that failed first; every node that ended badly without
/// being stopped by us and whose agent is gone counts as lost too.
AttemptFailure ClassifyFailure(const std::vector<SessionNode>& nodes, const SessionReport& report);

/// One attempt of a job, for the summary at the end.
struct AttemptRecord {
  int restart = 0;                     ///< 0 for the first attempt
  std::vector<std::string> hosts;      ///< node-rank order
  std::string outcome;                 ///< "ok", "failed: ...", "preflight: ...", "interrupted"
  std::chrono::milliseconds lasted{0};
  bool operator==(const AttemptRecord&) const = default;
};

/// "attempts: 3" then one line per attempt: its number, nodes, how long it
/// lasted and how it ended.
std::string FormatAttempts(const std::vector<AttemptRecord>& attempts);

}  // namespace topolaunch
