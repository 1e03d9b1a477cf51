// `run --max-restarts`: the job's attempts. A pass (run/stages.h) plans,
// preflights and runs the job once; this loop decides what comes next.
// Pure: the pass, the notes and the wait are passed in, so tests drive the
// loop with a recording fake pass and no clock.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// What a pass learned that moves the order: the nodes' own layouts put
/// them in NVLink domains the topology did not show.
struct Replan {
  Topology learned;                // the pass's topology, the nodes' layouts attached
  std::vector<std::string> hosts;  // the nodes it chose
};

/// What a pass is asked to run.
struct PassRequest {
  int restart = 0;                                ///< 0 first, then 1, 2, ... (TOPOLAUNCH_RESTART_COUNT)
  std::optional<std::vector<std::string>> hosts;  ///< these nodes instead of choosing from the pool
  const Replan* replan = nullptr;                 ///< layouts learned by an earlier pass
  /// Ranks per node the first attempt took from the nodes' GPU counts: kept,
  /// so a node that has lost a GPU since is not ready (lost), not a new count.
  std::optional<int> ranks_per_node;
};

/// What a pass tells the loop.
struct PassResult {
  int status = 0;                          ///< the exit status, were this the last pass
  std::optional<Replan> replan;            ///< plan again with these layouts (no attempt was made)
  bool ran = false;                        ///< workers were started
  std::vector<std::string> lost;           ///< nodes lost: gone in the run, or failing a restart's preflight
  std::vector<std::string> order;          ///< the nodes in node-rank order, once planned
  std::vector<std::string> pool;           ///< every host the job may use (spares come from it)
  std::shared_ptr<const Topology> topology;  ///< what the plan was made from, for the spare's choice
  bool allow_unknown = false;              ///< hosts off the fabric may be planned (else never a spare)
  std::optional<int> ranks_per_node;       ///< ranks per node taken from the GPU counts, when they were
  std::string outcome;                     ///< for the attempts summary: "ok", "failed: node2: ...", ...
  std::chrono::milliseconds lasted{0};     ///< from the start of the pass
};

using RunPass = std::function<PassResult(const PassRequest&)>;

/// The restart flags of `run`.
struct RestartOptions {
  int max_restarts = 0;        ///< --max-restarts
  double delay_s = 3;          ///< --restart-delay
  int min_nnodes = 0;          ///< --min-nnodes; 0: never fewer nodes
  std::string failed_hosts;    ///< --failed-hosts FILE, "" for none
};

/// How the loop talks to the world.
struct RestartIo {
  std::function<void(std::string_view)> note;      ///< one line for people (stderr)
  std::function<void(std::string_view)> print;     ///< the attempts summary (stderr)
  std::function<int(const Error&)> report_error;   ///< prints an error, returns its exit status
  /// Waits this long; false when a stop (Ctrl-C) came meanwhile.
  std::function<bool(std::chrono::milliseconds)> wait;
  /// Writes a whole file atomically (--failed-hosts).
  std::function<Status(const std::string& path, std::string_view text)> write_file;
};

/// Runs `pass` until the job succeeds, fails for good, or is stopped:
/// after a failed attempt (with --max-restarts left) a lost node is replaced
/// by the spare ChooseSpare picks (or dropped, down to --min-nnodes), a
/// worker failure restarts on the same nodes, after --restart-delay (a stop
/// during the wait: 130). Prints every attempt at the end (with restarts
/// allowed) and writes --failed-hosts. Returns the exit status.
int RunAttempts(const RestartOptions& options, const RunPass& pass, const RestartIo& io);

}  // namespace topolaunch
