// The subset of OpenSSH's client configuration (~/.ssh/config) a launcher
// needs: `Host` blocks with patterns (`*`, `?`, `!negated`), and in them
// `HostName`, `User`, `Port`, `IdentityFile`. As in OpenSSH, the first value
// obtained for a key wins and IdentityFile values accumulate; `Match`
// blocks are skipped (their settings ignored). Pure: the caller reads the
// file and passes its text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

/// One `Host` block (the settings before the first `Host` form a block
/// whose pattern is `*`).
struct SshConfigBlock {
  std::vector<std::string> patterns;
  std::vector<std::pair<std::string, std::string>> settings;  ///< lower-case key, value
  int line = 0;
};

/// A parsed configuration, in file order.
struct SshConfig {
  std::vector<SshConfigBlock> blocks;
};

/// What the configuration says for one host; unset fields are absent.
struct SshHostSettings {
  std::optional<std::string> host_name;
  std::optional<std::string> user;
  std::optional<int> port;
  std::vector<std::string> identity_files;  ///< `~` and %d/%h/%r/%u/%% expanded
  bool operator==(const SshHostSettings&) const = default;
};

/// Parses config text (`Key value` or `Key=value`, `#` comments, quoted
/// values). Errors (kBadInput, all at once, as `file_name:line`): a Port that
/// is not 1..65535, a key without a value. Unknown keys are kept and ignored.
Result<SshConfig> ParseSshConfig(std::string_view text, std::string_view file_name);

/// True when `host` matches an OpenSSH pattern list (any positive pattern
/// matches and no negated one does).
bool MatchesHostPatterns(const std::vector<std::string>& patterns, std::string_view host);

/// The settings for `host`. `home` expands `~` and %d; `local_user` is %u
/// (and %r when no User is set).
SshHostSettings ResolveSshHost(const SshConfig& config, std::string_view host, std::string_view home,
                               std::string_view local_user);

/// ssh_config's and known_hosts' `*` and `?` patterns, case-insensitively
/// (host names are), in pattern times text steps at worst.
bool GlobMatch(std::string_view pattern, std::string_view text);

/// Key types a known_hosts text holds for `host` at `port` (plain host
/// entries `host`/`[host]:port`, comma lists; hashed `|1|` entries and
/// `@revoked`/`@cert-authority` lines are skipped), in file order without
/// repeats: "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...
std::vector<std::string> KnownHostKeyTypes(std::string_view known_hosts_text, std::string_view host, int port);

}  // namespace topolaunch
