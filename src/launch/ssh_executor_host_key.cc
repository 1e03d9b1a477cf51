// Host-key policy for the SSH executor, like OpenSSH's StrictHostKeyChecking
// "yes" (or "accept-new" with --accept-new-host-keys): a changed key is
// refused as a possible impostor, an unknown one is refused with the
// command that accepts it, or appended to known_hosts under accept-new.
// libssh2 would otherwise pick ecdsa even where known_hosts holds another
// type for the host, so the known key types are asked for first.
#include "launch/ssh_session_internal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

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

std::optional<Failure> CheckHostKey(LIBSSH2_SESSION* session, const Target& target, const SshOptions& options,
                                    std::mutex& known_hosts_mutex) {
  size_t key_len = 0;
  int key_type = 0;
  const char* key = Ssh2().session_hostkey(session, &key_len, &key_type);
  if (!key) return Failure{ErrorCode::kUnavailable, "the server sent no host key"};
  LIBSSH2_KNOWNHOSTS* known = Ssh2().knownhost_init(session);
  std::lock_guard lock(known_hosts_mutex);
  Ssh2().knownhost_readfile(known, options.known_hosts_file.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
  int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | KnownHostKeyBit(key_type);
  libssh2_knownhost* found = nullptr;
  int check = Ssh2().knownhost_checkp(known, target.address.c_str(), target.port, key, key_len, mask, &found);
  std::string entry = target.port == 22 ? target.address : fmt::format("[{}]:{}", target.address, target.port);
  std::optional<Failure> failure;
  if (check == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
    failure = Failure{ErrorCode::kUnavailable,
                      fmt::format("the {} host key has CHANGED ({}; {} holds another): possibly an impostor. "
                                  "If the host was reinstalled, remove the old key with `ssh-keygen -R '{}' -f {}` "
                                  "and connect again",
                                  KeyTypeName(key_type), Fingerprint(session), options.known_hosts_file, entry,
                                  options.known_hosts_file)};
  } else if (check != LIBSSH2_KNOWNHOST_CHECK_MATCH && !options.accept_new_host_keys) {
    failure = Failure{ErrorCode::kUnavailable,
                      fmt::format("unknown host key ({} {}), not in {}. To accept it, check the fingerprint and run "
                                  "`ssh-keyscan -p {} -t {} {} >> {}`, or pass --accept-new-host-keys",
                                  KeyTypeName(key_type), Fingerprint(session), options.known_hosts_file,
                                  target.port, KeyTypeName(key_type), target.address, options.known_hosts_file)};
  } else if (check != LIBSSH2_KNOWNHOST_CHECK_MATCH) {
    libssh2_knownhost* added = nullptr;
    char line[16384];
    size_t line_len = 0;
    int typemask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | KnownHostKeyBit(key_type);
    if (Ssh2().knownhost_addc(known, entry.c_str(), nullptr, key, key_len, nullptr, 0, typemask, &added) != 0 ||
        Ssh2().knownhost_writeline(known, added, line, sizeof line, &line_len, LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
      failure = Failure{ErrorCode::kInternal, "cannot format the host key for known_hosts: " + LastError(session)};
    } else {
      int fd = open(options.known_hosts_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0 || write(fd, line, line_len) != static_cast<ssize_t>(line_len))
        failure = Failure{ErrorCode::kUnavailable, fmt::format("cannot append to {}: {}", options.known_hosts_file,
                                                               std::strerror(errno))};
      if (fd >= 0) close(fd);
    }
  }
  Ssh2().knownhost_free(known);
  return failure;
}

}  // namespace topolaunch::ssh_internal
