// One job's conversation with its agents, through an Executor: start an
// agent per node, collect their preflight replies, then either send each
// node its launch message or tell them all to start nothing; supervise the
// running nodes and stop them all as soon as one fails or a stop is asked.
//
// Why the session and not torchrun stops the nodes: with static rendezvous
// a worker failing on one node is not propagated to the others, which would
// wait in their next collective until a timeout. Stopping is EOF on each
// agent's stdin (libssh2 1.10 cannot send signals): the agent stops its
// whole process tree (SIGTERM, SIGKILL after the message's grace).
//
// Pure: time comes from the clock passed in; lines go to a LinePrinter.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "launch/executor.h"
#include "launch/launch_message.h"
#include "launch/preflight.h"
#include "launch/rank_lines.h"

namespace topolaunch {

/// One line of a node's output: the node's own (torchrun, the agent), or
/// one of its ranks' (rank_lines.h), on the stream it was written to.
struct NodeLine {
  size_t node = 0;
  OutputStream stream = OutputStream::kStdout;
  RankLabel label;        ///< rank -1: the node's own line
  std::string_view text;  ///< without the label
};

/// Where the nodes' output lines go (after the preflight reply is taken
/// out). Calls never overlap.
class LinePrinter {
 public:
  virtual ~LinePrinter() = default;
  virtual void Line(const NodeLine& line) = 0;
  /// A one-line status for the terminal (the preflight's progress) that
  /// lines print over; "" clears it. Ignored where nothing is shown.
  virtual void Status(std::string_view) {}
};

struct SessionNode {
  std::string host;
  int node_rank = 0;
};

struct SessionOptions {
  Command agent;                                ///< how to start `topolaunch agent` on a node
  PreflightRequest preflight;
  std::chrono::milliseconds preflight_timeout{60'000};
  std::chrono::milliseconds stop_grace{5'000};  ///< Stop(): EOF, then the connection is closed after this
  std::chrono::milliseconds failed_node_settle{3'000};  ///< a node reporting a failed worker may end by itself this long
  size_t tail_lines = 20;                       ///< last lines kept per node for the report
  std::chrono::milliseconds heartbeat{0};       ///< a byte to every running agent this often (LaunchMessage::heartbeat); 0: none
  std::function<int64_t()> now_ms;              ///< wall clock (Unix ms), for the clock check
  /// Called about once a second while the preflight waits: the nodes that
  /// have not answered yet (in node order), and how long it has waited.
  std::function<void(const std::vector<size_t>& waiting, std::chrono::milliseconds waited)> preflight_progress;
};

/// One node's preflight: its reply and when it arrived, or why there is none.
struct NodePreflight {
  std::optional<PreflightReply> reply;
  int64_t sent_ms = 0;      ///< now_ms() as the request went out
  int64_t received_ms = 0;  ///< now_ms() as the reply came in
  std::string failure;  ///< start error, bad reply, agent ended, timeout; "" with a reply
};

/// How one node ended.
struct NodeOutcome {
  std::optional<ExitInfo> exit;    ///< nullopt: never started
  bool stopped = false;            ///< we stopped it because another node failed or a stop was asked
  std::chrono::milliseconds ended_after{0};  ///< since Launch
  std::deque<std::string> tail;    ///< its last output lines (each cut to 4 KiB), a rank's as "RANK: text"
  std::string failure;             ///< what torchrun reported failing ("worker failed: local rank 1 exit code 3 (torchrun)"); "" if nothing
};

struct SessionReport {
  std::vector<NodeOutcome> nodes;  ///< in the session's node order
  std::optional<size_t> first_failure;  ///< the node that failed first by itself
  bool interrupted = false;        ///< the stop flag was raised
  std::chrono::milliseconds wall{0};
};

class RunSession {
 public:
  RunSession(Executor& executor, std::vector<SessionNode> nodes, SessionOptions options, LinePrinter& printer);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  /// Starts every agent with the preflight request and waits until each has
  /// replied, failed, or the timeout passed (or `stop` is raised).
  std::vector<NodePreflight> Preflight(const std::atomic<bool>& stop);

  /// Tells every agent to start nothing (EOF) and waits until they end.
  void Abort();

  /// Sends node i `messages[i]`, then supervises until every node ended.
  /// The first node to end badly (non-zero exit, signal, lost connection)
  /// or a raised `stop` stops all others.
  SessionReport Launch(const std::vector<LaunchMessage>& messages, const std::atomic<bool>& stop);

 private:
  struct NodeState;
  void OnLine(size_t node, OutputStream stream, std::string_view text);
  void StopAll(const std::vector<size_t>& which, std::optional<size_t> failed);
  std::optional<ExitInfo> Settle(RunningCommand& command);

  Executor& executor_;
  std::vector<SessionNode> nodes_;
  SessionOptions options_;
  LinePrinter& printer_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<NodeState>> state_;
};

}  // namespace topolaunch
