// Agents that connect back: how one srun step reaches every node, as pure
// values.
//
// srun gives every task of a step the same stdin, so the launch messages
// (each node's own settings and the forwarded secrets) cannot travel
// there. Instead the step's stdin carries one line to every agent:
//
//   @topolaunch-connect PORT SECRET [pinned] ADDRESS...
//
// the port `run` listens on, the job's secret (32 random bytes, hex, new
// for every step) and the login node's addresses to try in order ("pinned":
// only this one, whatever srun's own address; run --connect-back-address).
// The secret never crosses the connection. Each node's credential is a key
// bound to its name, derived from it (connect_back_auth.h), and the two
// sides prove they hold that key over nonces fresh from both, so nothing a
// relay or a listener sees can be used again:
//
//   agent:  @topolaunch-hello TASK HOST NONCE PROOF
//   run:    @topolaunch-run NONCE PROOF
//   agent:  @topolaunch-ready PROOF
//
// (TASK is the agent's task id in the step, SLURM_PROCID; HOST its Slurm
// node name, SLURMD_NODENAME; each NONCE and PROOF 64 hex digits). `run`
// says nothing before a hello that proves the node's key, and nothing an
// agent sends counts before its ready proves it answered this very
// connection's nonce. From then on both directions are sealed records
// (channel_crypto.h) under keys of this connection alone, and carry what
// the agent's stdin carried before (the preflight request, the launch
// message, heartbeats; EOF is "stop") and, back, the agent's lines in
// frames, one per line:
//
//   o TEXT     a stdout line         e TEXT     a stderr line
//   x STATUS   the agent's exit status, its last frame
//
// Every line the agent sends is framed, so nothing a worker prints can pass
// for a status. The secret is as secret as the step's stdin: srun carries it
// over Slurm's own I/O connection, as it carried the launch messages before.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/executor.h"

namespace topolaunch {

struct ConnectBack {
  int port = 0;
  std::string secret;                  ///< 64 hex digits
  std::vector<std::string> addresses;  ///< numeric IPv4/IPv6, tried in order
  bool pinned = false;                 ///< the one address to use, whatever srun's
  bool operator==(const ConnectBack&) const = default;
};

/// The line for the step's stdin, with its '\n'.
std::string FormatConnectBack(const ConnectBack& where);
bool IsConnectBack(std::string_view line);
/// nullopt unless the line is well formed: a port in 1..65535, a secret of
/// 64 hex digits, one address at least (exactly one when pinned), each only
/// hex digits, '.', ':'.
std::optional<ConnectBack> ParseConnectBack(std::string_view line);
/// True when `text` is a numeric IPv4 or IPv6 address as far as its
/// characters go (what the connect line may carry).
bool LooksLikeNumericAddress(std::string_view text);

/// The addresses an agent tries, in order: the pinned one; else only the
/// one srun itself came from (SLURM_LAUNCH_NODE_IPADDR, `launch_node`) when
/// that is a numeric address; else those `run` advertised. Slurm's own I/O
/// connection already reaches the launch node there; the advertised list
/// holds every address of the login node, bridges such as docker0 included,
/// and on a compute node that has the same bridge address another user
/// could listen on it.
std::vector<std::string> AddressesToTry(const ConnectBack& where, std::string_view launch_node);

/// The agent's first line.
struct ConnectHello {
  int task = 0;       ///< SLURM_PROCID
  std::string host;   ///< SLURMD_NODENAME
  std::string nonce;  ///< the agent's, 64 hex digits
  std::string proof;  ///< connect_back_auth.h
  bool operator==(const ConnectHello&) const = default;
};
/// `run`'s answer to a hello that proved itself.
struct RunAnswer {
  std::string nonce;  ///< `run`'s, 64 hex digits
  std::string proof;
  bool operator==(const RunAnswer&) const = default;
};

/// Each line with its '\n'; each parser takes the line without it and
/// returns nullopt unless it is well formed (a task in 0..10,000,000, a host
/// name without spaces or control bytes, nonces and proofs of 64 lowercase
/// hex digits). Whether a proof is true is connect_back_auth.h's question.
std::string FormatConnectHello(const ConnectHello& hello);
std::optional<ConnectHello> ParseConnectHello(std::string_view line);
std::string FormatRunAnswer(const RunAnswer& answer);
std::optional<RunAnswer> ParseRunAnswer(std::string_view line);
std::string FormatAgentReady(std::string_view proof);
std::optional<std::string> ParseAgentReady(std::string_view line);

/// An output line as a frame, with its '\n'.
std::string FormatOutputFrame(OutputStream stream, std::string_view text);
/// The agent's last frame, with its '\n'.
std::string FormatExitFrame(int status);

/// One frame from an agent, without its '\n'.
struct AgentFrame {
  enum class Kind { kOutput, kExit, kBad } kind = Kind::kBad;
  OutputStream stream = OutputStream::kStdout;
  std::string_view text;  ///< kOutput: the line
  int status = 0;         ///< kExit: 0..255
};
AgentFrame ParseAgentFrame(std::string_view line);

}  // namespace topolaunch
