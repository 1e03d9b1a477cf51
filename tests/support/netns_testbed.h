// A small cluster on one machine for SSH tests: N network namespaces on a
// private bridge (10.200.0.0/24, see TESTBED.md), each with its own host
// name (UTS namespace), its own /etc/hosts naming every node (a private
// mount namespace: torchrun's master address is a node's name) and its own
// sshd, plus a "head" namespace the client side runs in. Keys (ed25519 host
// and user keys), known_hosts and a client home directory live in a
// temporary directory. Names carry this process's PID, so parallel tests
// do not collide and a later testbed removes what a crashed one left.
// Everything is torn down by PID and by name in the destructor.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch/ssh_executor.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/result.h"

namespace topolaunch::testing {

class NetnsTestbed {
 public:
  /// Why this machine cannot hold a testbed (not root, or a kernel without
  /// `ip netns`), or nullopt when it can: tests GTEST_SKIP with this reason.
  /// A missing package (sshd, ssh-keygen, nsenter, unshare) is no reason:
  /// Start fails naming it.
  static std::optional<std::string> Unavailable();

  /// Brings up `nodes` nodes named node1..nodeN at 10.200.0.2.. . Extra
  /// `sshd -o` options (e.g. "MaxStartups=100") apply to every sshd.
  /// Errors: kUnavailable naming the missing program or the step that failed
  /// (what was built so far is torn down).
  static Result<std::unique_ptr<NetnsTestbed>> Start(int nodes, std::vector<std::string> sshd_options = {});
  ~NetnsTestbed();
  NetnsTestbed(const NetnsTestbed&) = delete;
  NetnsTestbed& operator=(const NetnsTestbed&) = delete;

  int nodes() const { return static_cast<int>(node_ns_.size()); }
  /// "node<i>", i from 1.
  std::string NodeName(int i) const;
  /// "10.200.0.<i+1>".
  std::string NodeAddress(int i) const;
  /// The head namespace's address on the bridge (the login node's).
  std::string HeadAddress() const { return "10.200.0.1"; }
  /// An address on the bridge nobody answers (ARP fails: connects time out).
  std::string SilentAddress() const { return "10.200.0.250"; }
  const std::string& HeadNamespace() const { return head_ns_; }
  std::string NodeNamespace(int i) const { return node_ns_.at(i - 1); }
  /// The client's private key (ed25519), the only key in authorized_keys.
  std::string ClientKey() const { return dir_.File("id_ed25519"); }
  /// A known_hosts with every node's ed25519 host key under its name and address.
  std::string KnownHosts() const { return dir_.File("known_hosts"); }
  /// ~/.ssh/config text mapping node<i> to its address (`Host node1 / HostName ...`).
  std::string SshConfigText() const;
  /// SshExecutor options of the client (root) reaching every node: the
  /// config above, the client key, and `known_hosts` (a copy of KnownHosts()
  /// a test may change) with `home` for `~`.
  SshOptions ClientSshOptions(const std::string& home, const std::string& known_hosts) const;
  /// The /etc/hosts every node sees: localhost, then node<i> at its address.
  std::string HostsFile() const { return dir_.File("hosts"); }
  /// A home directory for the client side: .ssh/config (SshConfigText),
  /// .ssh/known_hosts (KnownHosts) and .ssh/id_ed25519 (ClientKey).
  std::string ClientHome() const { return dir_.File("home"); }
  /// `argv` run inside the head namespace (`nsenter --net`, which execs, so
  /// the child's PID is argv's) with HOME=ClientHome(), `env` on top.
  ProcessSpec InHead(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {}) const;
  /// `argv` run as node i would run it: in its network namespace, with its
  /// host name, its /etc/hosts and its own /sys (sshd and slurmd start so).
  /// The wrapper execs argv, so the child's PID is argv's.
  ProcessSpec OnNode(int i, std::vector<std::string> argv) const;
  /// A scratch directory removed with the testbed.
  const TempDir& dir() const { return dir_; }

  /// Stops (SIGKILL) node i's sshd and every process in its namespace.
  void StopNode(int i);
  /// Starts node i's sshd again after StopNode. Errors as for Start.
  Status RestartNode(int i);
  /// PIDs of the processes running in node i's namespace (`ip netns pids`).
  std::vector<pid_t> PidsInNode(int i) const;
  /// The root namespace's safety route when it is still there though no
  /// live testbed uses it (a leak), else nullopt; checked under the lock
  /// testbeds add and remove it under, so a parallel test's is never taken
  /// for a leak.
  static std::optional<std::string> OrphanedRoute();

  /// While alive, the calling thread (and threads it creates) use the head
  /// namespace's network; the destructor restores the thread's own.
  class EnterHead {
   public:
    explicit EnterHead(const NetnsTestbed& testbed);
    ~EnterHead();
    EnterHead(const EnterHead&) = delete;
    EnterHead& operator=(const EnterHead&) = delete;
    bool ok() const { return ok_; }

   private:
    int saved_fd_ = -1;
    bool ok_ = false;
  };

 private:
  NetnsTestbed() = default;
  Status Build(int nodes, const std::vector<std::string>& sshd_options);
  Status WriteClientFiles(int nodes);
  Status StartSshd(int i);
  void TearDown();

  TempDir dir_;
  std::string prefix_;
  bool route_user_ = false;  ///< registered as a user of the shared route
  std::string switch_ns_, head_ns_;
  std::vector<std::string> node_ns_;
  std::vector<std::string> sshd_options_;
  std::vector<std::unique_ptr<BackgroundProcess>> sshds_;  ///< by node, from node1
};

/// Removes namespaces left by earlier test processes that are gone.
void RemoveStaleTestbeds();

}  // namespace topolaunch::testing
