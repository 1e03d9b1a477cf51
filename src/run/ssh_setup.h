// The SSH client settings of the user running `run`, as OpenSSH would find
// them: ~/.ssh/config, ~/.ssh/known_hosts, the default key files and
// ssh-agent (SSH_AUTH_SOCK). The one place `run` reads them.
#pragma once

#include <chrono>
#include <string>

#include "launch/ssh_executor.h"
#include "topolaunch/result.h"

namespace topolaunch::run {

struct SshSetupFlags {
  bool accept_new_host_keys = false;
  std::chrono::milliseconds connect_timeout{10'000};
  std::string ssh_config;   ///< "" = ~/.ssh/config when it exists
  std::string known_hosts;  ///< "" = ~/.ssh/known_hosts
};

/// Errors: kBadInput naming ~/.ssh/config:line for a bad config.
Result<SshOptions> ReadSshSetup(const SshSetupFlags& flags);

}  // namespace topolaunch::run
