// Host-key policy for the SSH executor, like OpenSSH's StrictHostKeyChecking
// "yes" (or "accept-new" with --accept-new-host-keys): a changed key is
// refused as a possible impostor, and so is a key of a type known_hosts
// does not hold for a host it knows (an impostor could otherwise present a
// new type and be appended under accept-new); an unknown host is refused
// with the command that accepts it, or appended under accept-new. A key
// marked @revoked is refused for every host. known_hosts is read whole
// (launch/known_hosts.h): a line libssh2 cannot read is an error naming it,
// never the silent end of the file. libssh2 would otherwise pick ecdsa even
// where known_hosts holds another type for the host, so the known key types
// are asked for first.
#include "launch/ssh_session_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/text_io.h"
#include "launch/known_hosts.h"
#include "launch/ssh_config.h"

namespace topolaunch::ssh_internal {

namespace {

const char* KeyTypeName(int hostkey_type) {
  switch (hostkey_type) {
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return "ssh-ed25519";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return "ecdsa-sha2-nistp256";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return "ecdsa-sha2-nistp384";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return "ecdsa-sha2-nistp521";
    case LIBSSH2_HOSTKEY_TYPE_RSA: return "ssh-rsa";
    default: return "unknown";
  }
}

int KnownHostKeyBit(int hostkey_type) {
  switch (hostkey_type) {
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return LIBSSH2_KNOWNHOST_KEY_ED25519;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_RSA: return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    default: return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
  }
}

std::string Fingerprint(LIBSSH2_SESSION* session) {
  const auto* hash = reinterpret_cast<const unsigned char*>(Ssh2().hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256));
  if (!hash) return "?";
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out = "SHA256:";
  for (int i = 0; i < 32; i += 3) {
    unsigned v = hash[i] << 16 | (i + 1 < 32 ? hash[i + 1] << 8 : 0) | (i + 2 < 32 ? hash[i + 2] : 0);
    int chars = i + 2 < 32 ? 4 : i + 1 < 32 ? 3 : 2;
    for (int c = 0; c < chars; ++c) out += kAlphabet[(v >> (18 - 6 * c)) & 63];
  }
  return out;  // unpadded, as ssh-keygen -l prints it
}

}  // namespace

// The host-key algorithms known_hosts holds for this host first, so the
// server presents a key we can check.
void PreferKnownHostKeys(LIBSSH2_SESSION* session, const std::string& known_hosts_text, const Target& target) {
  static const std::vector<std::string> kSupported = {"ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
                                                      "ecdsa-sha2-nistp521", "ssh-rsa"};
  std::vector<std::string> order = KnownHostKeyTypes(known_hosts_text, target.address, target.port);
  std::erase_if(order, [](const std::string& t) { return std::find(kSupported.begin(), kSupported.end(), t) == kSupported.end(); });
  for (const std::string& type : kSupported)
    if (std::find(order.begin(), order.end(), type) == order.end()) order.push_back(type);
  std::string pref;
  for (const std::string& type : order) pref += (pref.empty() ? "" : ",") + type;
  Ssh2().session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, pref.c_str());
}

namespace {

// known_hosts as libssh2 entries, every line read; a missing file is empty
// (as OpenSSH has it). Failures name FILE:LINE.
struct KnownHosts {
  LIBSSH2_KNOWNHOSTS* libssh2 = nullptr;
  KnownHostsFile file;
  ~KnownHosts() {
    if (libssh2) Ssh2().knownhost_free(libssh2);
  }
};

std::optional<Failure> ReadKnownHosts(LIBSSH2_SESSION* session, const std::string& path, KnownHosts& known) {
  std::string text;
  if (access(path.c_str(), F_OK) == 0) {
    Result<std::string> read = ReadTextFile(path);
    if (!read.ok()) return Failure{ErrorCode::kUnavailable, read.error().Message()};
    text = std::move(read).value();
  }
  Result<KnownHostsFile> parsed = ParseKnownHosts(text, path);
  if (!parsed.ok()) return Failure{ErrorCode::kBadInput, parsed.error().Message()};
  known.file = std::move(parsed).value();
  known.libssh2 = Ssh2().knownhost_init(session);
  if (!known.libssh2) return Failure{ErrorCode::kInternal, "cannot read known_hosts: " + LastError(session)};
  for (const KnownHostsEntry& entry : known.file.plain)
    if (Ssh2().knownhost_readline(known.libssh2, entry.text.data(), entry.text.size(), LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
      return Failure{ErrorCode::kBadInput,
                     fmt::format("{}:{}: libssh2 cannot read this entry ({}), so the file cannot be checked whole: fix "
                                 "or remove the line",
                                 path, entry.line, LastError(session))};
  return std::nullopt;
}

// Appends the presented key for `entry` to known_hosts (accept-new).
std::optional<Failure> AppendHostKey(LIBSSH2_SESSION* session, LIBSSH2_KNOWNHOSTS* known, const std::string& entry,
                                     const char* key, size_t key_len, int key_type, const std::string& file) {
  libssh2_knownhost* added = nullptr;
  char line[16384];
  size_t line_len = 0;
  int typemask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | KnownHostKeyBit(key_type);
  if (Ssh2().knownhost_addc(known, entry.c_str(), nullptr, key, key_len, nullptr, 0, typemask, &added) != 0 ||
      Ssh2().knownhost_writeline(known, added, line, sizeof line, &line_len, LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
    return Failure{ErrorCode::kInternal, "cannot format the host key for known_hosts: " + LastError(session)};
  std::optional<Failure> failure;
  int fd = open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, line, line_len) != static_cast<ssize_t>(line_len))
    failure = Failure{ErrorCode::kUnavailable, fmt::format("cannot append to {}: {}", file, std::strerror(errno))};
  if (fd >= 0) close(fd);
  return failure;
}

}  // namespace

std::optional<Failure> CheckHostKey(LIBSSH2_SESSION* session, const Target& target, const SshOptions& options,
                                    std::mutex& known_hosts_mutex) {
  size_t key_len = 0;
  int key_type = 0;
  const char* key = Ssh2().session_hostkey(session, &key_len, &key_type);
  if (!key) return Failure{ErrorCode::kUnavailable, "the server sent no host key"};
  const std::string& file = options.known_hosts_file;
  std::lock_guard lock(known_hosts_mutex);
  KnownHosts known;
  if (std::optional<Failure> failure = ReadKnownHosts(session, file, known)) return failure;
  std::string presented = Base64(std::string_view(key, key_len));
  for (const KnownHostsEntry& revoked : known.file.revoked)
    if (revoked.key_base64 == presented)
      return Failure{ErrorCode::kUnavailable, fmt::format("the {} host key ({}) is marked @revoked in {}:{}: refused",
                                                          KeyTypeName(key_type), Fingerprint(session), file, revoked.line)};
  int plain = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW;
  libssh2_knownhost* found = nullptr;
  int check = Ssh2().knownhost_checkp(known.libssh2, target.address.c_str(), target.port, key, key_len,
                                      plain | KnownHostKeyBit(key_type), &found);
  // Key-type bits 0: any entry for the host counts, so a host known only by
  // another type of key reads MISMATCH (libssh2's knownhost_check).
  bool other_type_known = check == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND &&
                          Ssh2().knownhost_checkp(known.libssh2, target.address.c_str(), target.port, key, key_len, plain,
                                                  &found) == LIBSSH2_KNOWNHOST_CHECK_MISMATCH;
  std::string entry = target.port == 22 ? target.address : fmt::format("[{}]:{}", target.address, target.port);
  if (check == LIBSSH2_KNOWNHOST_CHECK_MISMATCH || other_type_known)
    return Failure{ErrorCode::kUnavailable,
                   fmt::format("the {} host key has CHANGED ({}; {} holds {}): possibly an impostor. If the host was "
                               "reinstalled, remove the old key with `ssh-keygen -R '{}' -f {}` and connect again",
                               KeyTypeName(key_type), Fingerprint(session), file,
                               other_type_known ? "only keys of another type for it" : "another", entry, file)};
  if (check == LIBSSH2_KNOWNHOST_CHECK_MATCH) return std::nullopt;
  for (const KnownHostsEntry& authority : known.file.authorities)
    if (HostMatchesPatterns(authority.patterns, target.address, target.port))
      return Failure{ErrorCode::kUnavailable,
                     fmt::format("{}:{} vouches for this host with @cert-authority, but host certificates cannot be "
                                 "checked here (libssh2): add the host's own key ({} {}) with `ssh-keyscan -p {} -t {} {} "
                                 ">> {}` after checking its fingerprint",
                                 file, authority.line, KeyTypeName(key_type), Fingerprint(session), target.port,
                                 KeyTypeName(key_type), target.address, file)};
  if (!options.accept_new_host_keys)
    return Failure{ErrorCode::kUnavailable,
                   fmt::format("unknown host key ({} {}), not in {}. To accept it, check the fingerprint and run "
                               "`ssh-keyscan -p {} -t {} {} >> {}`, or pass --accept-new-host-keys",
                               KeyTypeName(key_type), Fingerprint(session), file, target.port, KeyTypeName(key_type),
                               target.address, file)};
  return AppendHostKey(session, known.libssh2, entry, key, key_len, key_type, file);
}

}  // namespace topolaunch::ssh_internal
