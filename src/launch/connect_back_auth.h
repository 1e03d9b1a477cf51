// The proofs of connect_back.h's handshake and the keys of the channel that
// follows, from the job's secret.
//
// A node's credential is HMAC-SHA256(secret, "topolaunch node\n" HOST): a
// key bound to the node's name. Every proof is an HMAC under it over a
// label, the task, the host and the nonces so far; the channel's keys, one
// per direction, are HMACs over both nonces. The agent's nonce makes `run`'s
// proof fresh, `run`'s nonce makes the agent's ready proof fresh: a recorded
// conversation proves nothing on another connection, and a hello proves
// nothing for another node.
#pragma once

#include <string>
#include <string_view>

#include "launch/channel_crypto.h"
#include "launch/connect_back.h"

namespace topolaunch {

struct ChannelKeys {
  ChannelKey to_agent;  ///< seals what `run` sends
  ChannelKey to_run;    ///< seals what the agent sends
};

/// One node's credential. Needs LoadChannelCrypto().
class NodeCredential {
 public:
  NodeCredential(std::string_view secret, std::string_view host);

  /// The agent's hello as task `task`, with its fresh `nonce`.
  ConnectHello Hello(int task, std::string nonce) const;
  /// True when the hello names this node and proves its key.
  bool Proves(const ConnectHello& hello) const;

  /// `run`'s answer to `hello`, with its fresh `nonce`.
  RunAnswer Answer(const ConnectHello& hello, std::string nonce) const;
  bool Proves(const ConnectHello& hello, const RunAnswer& answer) const;

  /// The agent's ready proof, once `run`'s answer proved itself.
  std::string Ready(const ConnectHello& hello, const RunAnswer& answer) const;
  bool ReadyProves(const ConnectHello& hello, const RunAnswer& answer, std::string_view proof) const;

  ChannelKeys Keys(const ConnectHello& hello, const RunAnswer& answer) const;

 private:
  std::string Mac(std::string_view label, const ConnectHello& hello, std::string_view run_nonce) const;

  std::string host_;
  ChannelKey key_;
};

}  // namespace topolaunch
