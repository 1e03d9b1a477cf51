// The one message `topolaunch agent` reads from its stdin: what to run, as
// one line of JSON. Sending the command this way keeps every environment
// value (tokens, passwords) out of all command lines, local and remote:
//
//   {"argv":["torchrun","--nnodes=2","train.py"],"env":{"NCCL_IB_HCA":"mlx5_0"},
//    "cwd":"/work","grace_ms":5000}
//
// argv is required and non-empty; env, cwd, grace_ms, heartbeat_ms and
// rank_output (a boolean) are optional.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "launch/command.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// A parsed launch message.
struct LaunchMessage {
  Command command;
  std::chrono::milliseconds grace{5000};  ///< SIGTERM → SIGKILL delay when stopping the tree
  /// When > 0, `run` writes a byte to the agent's stdin this often; three
  /// periods without one mean the login node is cut off (a network cut
  /// closes no connection), and the agent stops the tree. 0: off.
  std::chrono::milliseconds heartbeat{0};
  /// Each rank's stdout and stderr reach the agent on their own connection
  /// and go on labelled with the rank (rank_lines.h); false: the ranks
  /// share torchrun's output.
  bool rank_output = false;
  bool operator==(const LaunchMessage&) const = default;
};

/// The message as one line of JSON, ending in '\n'.
std::string FormatLaunchMessage(const LaunchMessage& message);

/// Parses one message. Errors (kBadInput, every problem, by JSON path):
/// bad JSON, missing or empty argv, non-string items, a bad environment
/// name, grace_ms outside 0..3600000.
Result<LaunchMessage> ParseLaunchMessage(std::string_view text);

}  // namespace topolaunch
