// The agent's side of connect_back.h: reach `run` over TCP. The only file
// of the agent that opens network sockets.
#pragma once

#include <chrono>

#include "launch/connect_back.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Connects to `run` at where.addresses in order (each given `each` to
/// connect and greet), checks `run`'s greeting and sends `hello`. Returns
/// the connected socket (blocking, close-on-exec). Errors: kUnavailable
/// naming each address tried and why it failed.
Result<int> ConnectToRun(const ConnectBack& where, const ConnectHello& hello, std::chrono::milliseconds each);

}  // namespace topolaunch
