// The agent's side of connect_back.h: reach `run` over TCP. The only file
// of the agent that opens network sockets.
#pragma once

#include <chrono>

#include <string>

#include "launch/connect_back.h"
#include "launch/connect_back_auth.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct ConnectedRun {
  int fd = -1;  ///< non-blocking, close-on-exec; the caller closes it
  ChannelKeys keys;
};

/// Connects to `run` at where.addresses in order (each given `each` to
/// connect and complete the handshake) as task `task` on node `host`.
/// Errors: kUnavailable naming each address tried and why it failed (or
/// that libcrypto is missing).
Result<ConnectedRun> ConnectToRun(const ConnectBack& where, int task, const std::string& host,
                                  std::chrono::milliseconds each);

}  // namespace topolaunch
