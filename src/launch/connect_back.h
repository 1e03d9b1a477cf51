// Agents that connect back: how one srun step reaches every node, as pure
// values.
//
// srun gives every task of a step the same stdin, so the launch messages
// (each node's own settings and the forwarded secrets) cannot travel
// there. Instead the step's stdin carries one line to every agent:
//
//   @topolaunch-connect PORT TOKEN ADDRESS...
//
// the port `run` listens on, a one-time token (32 random bytes, hex) and
// the login node's addresses to try in order. Each side proves it holds the
// token with one half of it: `run` speaks first,
//
//   @topolaunch-run FIRST-HALF
//
// so an agent that reached some other program on that port (a wrong
// address) gives nothing away, and the agent answers with its hello:
//
//   @topolaunch-hello SECOND-HALF TASK HOST
//
// (its task id in the step, SLURM_PROCID, and its Slurm node name,
// SLURMD_NODENAME). From then on the connection is the agent's stdin as
// before (the preflight request, the launch message, heartbeats; EOF is
// "stop"), and what the agent writes comes back in frames, one per line:
//
//   o TEXT     a stdout line         e TEXT     a stderr line
//   x STATUS   the agent's exit status, its last frame
//
// Every line the agent sends is framed, so nothing a worker prints can pass
// for a status. The token is as secret as the step's stdin: srun carries it
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
  std::string token;                   ///< 64 hex digits
  std::vector<std::string> addresses;  ///< numeric IPv4/IPv6, tried in order
  bool operator==(const ConnectBack&) const = default;
};

/// The line for the step's stdin, with its '\n'.
std::string FormatConnectBack(const ConnectBack& where);
bool IsConnectBack(std::string_view line);
/// nullopt unless the line is well formed: a port in 1..65535, a token of
/// 64 hex digits, one address at least, each only hex digits, '.', ':'.
std::optional<ConnectBack> ParseConnectBack(std::string_view line);

/// The addresses an agent tries, in order: only the one srun itself came
/// from (SLURM_LAUNCH_NODE_IPADDR, `launch_node`) when that is a numeric
/// address, else those `run` advertised. Slurm's own I/O connection already
/// reaches the launch node there; the advertised list holds every address of
/// the login node, bridges such as docker0 included, and on a compute node
/// that has the same bridge address another user could listen on it.
std::vector<std::string> AddressesToTry(const ConnectBack& where, std::string_view launch_node);

/// `run`'s greeting for `token`, with its '\n'.
std::string FormatRunGreeting(std::string_view token);
/// True when `line` (without its '\n') is the greeting for `token`.
bool IsRunGreeting(std::string_view line, std::string_view token);

struct ConnectHello {
  std::string token;  ///< the whole token; the line carries its second half
  int task = 0;      ///< SLURM_PROCID
  std::string host;  ///< SLURMD_NODENAME
  bool operator==(const ConnectHello&) const = default;
};

/// The agent's first line on the connection, with its '\n'.
std::string FormatConnectHello(const ConnectHello& hello);
/// True when `line` (without its '\n') is a well-formed hello proving
/// `token` (a task in 0..10,000,000, a host name without spaces or control
/// bytes); `hello` gets what it says.
bool ParseConnectHello(std::string_view line, std::string_view token, ConnectHello& hello);

/// True when both tokens are equal, in time that does not depend on where
/// they differ.
bool SameToken(std::string_view a, std::string_view b);

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
