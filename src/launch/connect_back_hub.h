// The login node's side of connect_back.h: a TCP listener that the agents
// of one srun step connect back to, and each node's connection as a
// RunningCommand. With connect_back_hub_handshake.cc (the connections not yet
// proven) and connect_back_listener.cc, the only files of `run` that open
// TCP sockets.
//
// A node is in once its agent proved itself (connect_back.h's handshake);
// from then on its connection carries sealed records both ways. The port
// stops taking connections once every node is in, or once AwaitAgents is
// over. Until then connections that have not proven themselves wait in
// bounded numbers, per source and in all (the oldest give way:
// connect_back_admission.h), each for 15 s at most; what they send is read
// as it comes, and running out of descriptors rests the listener.
// One thread serves the listener and every connection (poll), so a step of
// thousands of nodes costs one thread here, not one per node. Lines reach
// the sink from that thread, one at a time; a node counts as ended only
// after its last lines went to the sink.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/connect_back.h"
#include "launch/connect_back_listener.h"
#include "launch/executor.h"
#include "topolaunch/result.h"

namespace topolaunch {

class ConnectBackHub {
 public:
  /// Listens on a free port (of SrunPortRange when given) of every address
  /// of this machine (of one address alone when given: run
  /// --connect-back-address), with a new secret.
  /// `hosts[i]` is the node name node i's agent will give
  /// (SLURMD_NODENAME); its lines go to sink(i, ...). Errors: kUnavailable
  /// (no socket, no random bytes, no libcrypto, no free port in the
  /// range), kBadInput (the address is not one of this machine's).
  static Result<std::unique_ptr<ConnectBackHub>> Open(std::vector<std::string> hosts, OutputSink sink,
                                                      const ListenOn& where = {});
  /// Closes every connection: agents still running read EOF, their "stop".
  ~ConnectBackHub();
  ConnectBackHub(const ConnectBackHub&) = delete;
  ConnectBackHub& operator=(const ConnectBackHub&) = delete;

  /// Where the agents connect: the port, the secret, this machine's
  /// addresses (IPv4 first, then global IPv6; loopback only when there is
  /// nothing else), or the one address given.
  const ConnectBack& where() const { return where_; }

  /// Waits until every node is in, `gone()` is true (the
  /// step ended), or `timeout` passed. Returns, for each node that did not
  /// connect, why (the hellos refused are named there).
  std::vector<std::optional<std::string>> AwaitAgents(std::chrono::milliseconds timeout, const std::function<bool()>& gone);

  /// Once `ended()` is true (srun is gone), nodes still connected after
  /// `grace` count as lost and are closed. Polled by the hub's thread.
  void WatchStep(std::function<bool()> ended, std::chrono::milliseconds grace);

  // Node i's connection, once AwaitAgents said it connected; as the
  // RunningCommand calls of the same name (executor.h).
  std::optional<ExitInfo> Wait(size_t i, std::chrono::milliseconds timeout);
  Status WriteStdin(size_t i, std::string_view data);
  /// EOF to the agent once everything written before has gone out.
  void CloseStdin(size_t i);
  /// Closes node i's connection now: its ExitInfo (connection lost, unless
  /// it had ended).
  ExitInfo Drop(size_t i);
  /// The node whose agent is task `task` of the step, once it is in.
  std::optional<size_t> NodeOfTask(int task) const;

 private:
  struct State;
  ConnectBackHub() = default;
  std::unique_ptr<State> state_;
  ConnectBack where_;
};

}  // namespace topolaunch
