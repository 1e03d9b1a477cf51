// known_hosts read whole, before libssh2 sees any of it. libssh2 1.10's own
// reader (knownhost_readfile) stops at the first line it cannot parse, or
// at one over 4,091 bytes, and silently drops every entry after it; it
// knows no markers, so `@revoked` lines became junk entries and revoked
// keys were accepted. Here every line is looked at: plain entries go to
// libssh2 one by one (knownhost_readline, so a line it refuses is an error
// naming the line), `@revoked` keys are refused wherever they appear, and
// `@cert-authority` lines are kept to say, for a host they cover, that
// libssh2 cannot check host certificates. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

/// A line of known_hosts that holds a key.
struct KnownHostsEntry {
  size_t line = 0;                    ///< 1-based
  std::string text;                   ///< the line without its end ("\n", "\r\n")
  std::string marker;                 ///< "", "@revoked" or "@cert-authority"
  std::vector<std::string> patterns;  ///< the host patterns (comma-separated in the file)
  std::string key_type;               ///< "ssh-ed25519", ...
  std::string key_base64;
};

struct KnownHostsFile {
  std::vector<KnownHostsEntry> plain;        ///< for libssh2, in file order
  std::vector<KnownHostsEntry> revoked;      ///< @revoked
  std::vector<KnownHostsEntry> authorities;  ///< @cert-authority
};

/// Reads known_hosts `text`. Errors (kBadInput, every bad line at once,
/// each "FILE:LINE"): a line with a marker OpenSSH does not know, or
/// without host patterns, a key type and a key.
Result<KnownHostsFile> ParseKnownHosts(std::string_view text, std::string_view file_name);

/// True when `host` (reached at `port`) is one `patterns` name, as OpenSSH
/// matches them: `*` and `?` wildcards (GlobMatch, case-insensitive), `[host]:port` for a port other than
/// 22, and a `!pattern` that matches excludes the host whatever else does.
/// Hashed patterns (`|1|...`) never match here.
bool HostMatchesPatterns(const std::vector<std::string>& patterns, std::string_view host, int port);

/// `bytes` in standard base64 with padding, as known_hosts writes keys.
std::string Base64(std::string_view bytes);

}  // namespace topolaunch
