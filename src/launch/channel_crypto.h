// The cryptography of the connect-back channel (connect_back.h):
// HMAC-SHA256 for its keys and proofs, AES-256-GCM for its records, both
// from libcrypto (OpenSSL), the library libssh2 already brings. Like
// libssh2, libcrypto is opened with dlopen the first time a channel needs
// it, so the commands that make no connection do not load it.
//
// A record on the wire: a 4-byte big-endian length L, then L bytes (the
// ciphertext and its 16-byte tag). Its nonce is the record's number in its
// direction (each direction has its own key, so no nonce is used twice);
// the length is authenticated with it. A record that does not authenticate
// ends the channel: nothing after it can be trusted.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

using ChannelKey = std::array<unsigned char, 32>;

/// Loads libcrypto once. Errors: kUnavailable naming the library and what
/// to install. Every call below needs it to have succeeded.
Status LoadChannelCrypto();

/// HMAC-SHA256 of `message` under `key`.
ChannelKey Hmac(std::string_view key, std::string_view message);
inline std::string_view KeyBytes(const ChannelKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}
/// `bytes` fresh random bytes from the kernel, as lowercase hex. Errors:
/// kUnavailable.
Result<std::string> RandomHex(size_t bytes);
/// The key as 64 lowercase hex digits, and back (nullopt unless 64 hex digits).
std::string KeyHex(const ChannelKey& key);
std::optional<ChannelKey> KeyFromHex(std::string_view hex);
/// True when both are equal, in time that does not depend on where they differ.
bool SameBytes(std::string_view a, std::string_view b);

/// Plaintext into records, one direction of a channel.
class RecordSealer {
 public:
  static constexpr size_t kMaxPlain = 64 << 10;  ///< longer plaintext is split into several records
  explicit RecordSealer(const ChannelKey& key = {}) : key_(key) {}
  /// Appends `plain` to `wire` as records (none for no bytes).
  void Seal(std::string_view plain, std::string& wire);

 private:
  ChannelKey key_;
  uint64_t sent_ = 0;
};

/// Records back into plaintext, the other end of a RecordSealer.
class RecordOpener {
 public:
  explicit RecordOpener(const ChannelKey& key = {}) : key_(key) {}
  /// Takes bytes as they come from the wire; the plaintext of every whole
  /// record is appended to `plain`. False, from then on, once a record is
  /// too long or does not authenticate (tampered with, replayed, reordered,
  /// or sealed under another key).
  bool Feed(std::string_view wire, std::string& plain);
  /// Bytes held of a record not yet whole.
  size_t held() const { return held_.size(); }

 private:
  ChannelKey key_;
  uint64_t opened_ = 0;
  std::string held_;
  bool broken_ = false;
};

}  // namespace topolaunch
