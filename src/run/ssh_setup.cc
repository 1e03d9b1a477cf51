#include "run/ssh_setup.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/text_io.h"

namespace topolaunch::run {

namespace {

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Result<SshOptions> ReadSshSetup(const SshSetupFlags& flags) {
  SshOptions options;
  const passwd* entry = getpwuid(getuid());
  options.local_user = entry ? entry->pw_name : Getenv("USER");
  options.home = Getenv("HOME");
  if (options.home.empty() && entry) options.home = entry->pw_dir;
  std::string dot_ssh = options.home + "/.ssh";
  std::error_code ec;
  std::string config_file = flags.ssh_config.empty() ? dot_ssh + "/config" : flags.ssh_config;
  if (!flags.ssh_config.empty() || std::filesystem::exists(config_file, ec)) {
    Result<std::string> text = ReadTextFile(config_file);
    if (!text.ok()) return text.take_error();
    Result<SshConfig> config = ParseSshConfig(*text, config_file);
    if (!config.ok()) return config.take_error();
    options.config = std::move(config).value();
  }
  for (const char* key : {"id_ed25519", "id_ecdsa", "id_rsa"}) options.identity_files.push_back(dot_ssh + "/" + key);
  options.agent_socket = Getenv("SSH_AUTH_SOCK");
  options.known_hosts_file = flags.known_hosts.empty() ? dot_ssh + "/known_hosts" : flags.known_hosts;
  options.accept_new_host_keys = flags.accept_new_host_keys;
  options.connect_timeout = flags.connect_timeout;
  return options;
}

}  // namespace topolaunch::run
