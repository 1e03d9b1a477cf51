// `topolaunch agent`: the per-node supervisor started over SSH.
//
// Its first line on stdin is either a preflight request (preflight.h) or
// the launch message (launch_message.h), or, when srun started it as one
// task of a step for all nodes, where to connect back to `run`
// (connect_back.h): the same conversation then runs over that connection. A preflight is answered on stdout
// (one "@topolaunch-preflight {...}" line) and followed by the launch
// message, or by EOF: then nothing starts and the agent exits 0. With the
// launch message in hand it becomes a child subreaper, starts the command
// in its own process group and forwards its output line by line; with the
// message's rank_output, each rank (`topolaunch bind`) sends its stdout and
// stderr on its own connection (rank_output_socket.h), and the agent sends
// those lines on labelled with the rank (rank_lines.h). Then it
// watches three things: its stdin reaching EOF (the SSH channel or the
// login node is gone: libssh2 1.10 cannot send signals over a channel, so
// EOF is the stop signal), the heartbeat bytes `run` writes to stdin
// stopping (a network cut closes no connection: sshd would keep the session
// for hours), and SIGTERM/SIGHUP/SIGINT. Any of them stops the whole tree:
// SIGTERM to every live process below the agent (found through /proc,
// setsid'ed ones included thanks to the subreaper), SIGKILL after the
// message's grace period. When the command ends by itself, whatever it
// left running is stopped the same way. The agent's exit status is the command's (128+N
// for signal N).
#pragma once

#include "topolaunch/result.h"

namespace topolaunch {

/// File descriptors the agent talks through (the SSH channel's, normally).
struct AgentStreams {
  int in = 0;
  int out = 1;
  int err = 2;
  /// Output lines go out as connect_back.h's frames (one connection to
  /// `run` carries both streams).
  bool framed = false;
};

/// Runs the agent to the end. Returns the exit status to use (0 when a
/// preflight was answered and stdin ended instead of a launch message), or
/// an error (kBadInput: no or bad launch message, or a bad preflight
/// request; kUnavailable: the command could not be started) for the CLI
/// to report. Changes this process's signal
/// mask and SIGPIPE disposition, and makes it a child subreaper.
Result<int> RunAgent(const AgentStreams& streams);

}  // namespace topolaunch
