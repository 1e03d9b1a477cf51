// SshExecutor: runs commands on other hosts over SSH (libssh2 1.10).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "launch/executor.h"
#include "launch/ssh_config.h"

namespace topolaunch {

struct SshExecutorState;

/// Everything the SSH side needs, given by the caller (the CLI reads the
/// environment and ~/.ssh; this library reads only the files named here).
struct SshOptions {
  std::string local_user;                     ///< login user unless the config says User; %u
  std::string home;                           ///< expands `~` and %d in IdentityFile
  SshConfig config;                           ///< parsed ~/.ssh/config (may be empty)
  std::vector<std::string> identity_files;    ///< tried after the config's IdentityFile entries
  std::string agent_socket;                   ///< ssh-agent socket (SSH_AUTH_SOCK); empty: no agent
  std::string known_hosts_file;               ///< host keys are checked against it
  bool accept_new_host_keys = false;          ///< like OpenSSH's accept-new: append unknown keys
  std::chrono::milliseconds connect_timeout{10'000};  ///< TCP connect, handshake and auth, per attempt
  int keepalive_interval_s = 15;              ///< SSH keepalive while a command runs; 0: off
  int max_parallel_connects = 64;             ///< connection set-ups at once, over all hosts
  int max_connects_per_host = 8;              ///< set-ups at once to one sshd: under its MaxStartups (10 by default)
  int connect_attempts = 5;                   ///< tries when sshd drops a connection before auth
  std::chrono::milliseconds retry_backoff{100};  ///< first retry delay, doubled each time, jittered
};

/// Opens one SSH connection per request (at most max_parallel_connects,
/// and max_connects_per_host to one address and port,
/// being set up at a time, so sshd's MaxStartups is not hit; connections
/// dropped before authentication are retried with backoff), checks the
/// host key against known_hosts (the preferred host-key algorithms are the
/// ones known_hosts holds for that host, since libssh2 would otherwise pick
/// ecdsa), authenticates with the agent then the key files, and runs the
/// request's command (RenderShellCommand) in an exec channel. Start errors
/// name the host: kUnavailable for refused/unreachable hosts, unknown or
/// changed host keys (saying how to accept), failed authentication (saying
/// why RSA keys fail); kTimeout when connecting takes longer than
/// connect_timeout.
class SshExecutor : public Executor {
 public:
  explicit SshExecutor(SshOptions options);
  ~SshExecutor() override;
  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override;

 private:
  std::shared_ptr<SshExecutorState> state_;
};

}  // namespace topolaunch
