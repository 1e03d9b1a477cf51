// The agent's end of its sealed connection to `run` (connect_back.h): the
// agent's session reads and writes plain bytes on one end of a socket
// pair, as it would an SSH channel, and a thread of its own seals them into
// records for `run` and opens `run`'s records for it. EOF travels both
// ways; a record that does not authenticate is EOF too (the agent's
// "stop"), since nothing after it can be trusted.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "launch/connect_back_auth.h"
#include "topolaunch/result.h"

namespace topolaunch {

class AgentChannel {
 public:
  /// Takes over `wire`, the connection to `run` once the handshake is done
  /// (closed by the channel). Errors: kUnavailable (no socket pair).
  static Result<std::unique_ptr<AgentChannel>> Start(int wire, const ChannelKeys& keys);
  /// Finish(3 s) when not called before.
  ~AgentChannel();
  AgentChannel(const AgentChannel&) = delete;
  AgentChannel& operator=(const AgentChannel&) = delete;

  /// The agent's end: blocking, close-on-exec.
  int fd() const { return mine_; }
  /// EOF to `run` once everything written to fd() went out (or `run` is
  /// gone, or `limit` passed); then both ends are closed.
  void Finish(std::chrono::milliseconds limit);

 private:
  AgentChannel() = default;
  void Pump();

  int mine_ = -1;
  int pump_ = -1;
  int wire_ = -1;
  ChannelKeys keys_{};
  std::atomic<bool> finishing_ = false;
  std::atomic<int64_t> give_up_ns_ = 0;  ///< steady clock, once finishing
  std::thread thread_;
};

}  // namespace topolaunch
