// libcrypto, opened with dlopen the first time a channel needs it. The only
// file that includes OpenSSL.
#include "launch/channel_crypto.h"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace topolaunch {

namespace {

// The functions used, the same in OpenSSL 1.1 and 3.
#define TOPOLAUNCH_LIBCRYPTO_FUNCTIONS(X) \
  X(HMAC)                                 \
  X(EVP_sha256)                           \
  X(EVP_aes_256_gcm)                      \
  X(EVP_CIPHER_CTX_new)                   \
  X(EVP_CIPHER_CTX_free)                  \
  X(EVP_CIPHER_CTX_ctrl)                  \
  X(EVP_EncryptInit_ex)                   \
  X(EVP_EncryptUpdate)                    \
  X(EVP_EncryptFinal_ex)                  \
  X(EVP_DecryptInit_ex)                   \
  X(EVP_DecryptUpdate)                    \
  X(EVP_DecryptFinal_ex)

struct Libcrypto {
#define TOPOLAUNCH_LIBCRYPTO_MEMBER(name) decltype(&::name) name = nullptr;
  TOPOLAUNCH_LIBCRYPTO_FUNCTIONS(TOPOLAUNCH_LIBCRYPTO_MEMBER)
#undef TOPOLAUNCH_LIBCRYPTO_MEMBER
  std::optional<Error> error;
};

Libcrypto Open() {
  Libcrypto lib;
  void* handle = nullptr;
  std::string tried;
  for (const char* name : {"libcrypto.so.3", "libcrypto.so.1.1"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);  // never closed: channels live until the process ends
    if (handle) break;
    const char* why = dlerror();
    tried += fmt::format("{}{}", tried.empty() ? "" : "; ", why ? why : name);
  }
  if (!handle) {
    lib.error = Error(ErrorCode::kUnavailable, "libcrypto",
                      fmt::format("cannot load libcrypto, which the srun launcher's connection needs: {} (Debian: "
                                  "apt-get install libssl3)",
                                  tried));
    return lib;
  }
  std::string missing;
#define TOPOLAUNCH_LIBCRYPTO_RESOLVE(name)                                           \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name)); \
  if (!lib.name) missing += missing.empty() ? #name : ", " #name;
  TOPOLAUNCH_LIBCRYPTO_FUNCTIONS(TOPOLAUNCH_LIBCRYPTO_RESOLVE)
#undef TOPOLAUNCH_LIBCRYPTO_RESOLVE
  if (!missing.empty())
    lib.error = Error(ErrorCode::kUnavailable, "libcrypto", fmt::format("this libcrypto lacks {}", missing));
  return lib;
}

const Libcrypto& Crypto() {
  static const Libcrypto lib = Open();
  return lib;
}

constexpr size_t kTag = 16;
constexpr size_t kLength = 4;

void PutLength(uint32_t n, unsigned char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(n >> (24 - 8 * i));
}

std::array<unsigned char, 12> Nonce(uint64_t number) {
  std::array<unsigned char, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<unsigned char>(number >> (56 - 8 * i));
  return nonce;
}

struct CipherContext {
  EVP_CIPHER_CTX* ctx = Crypto().EVP_CIPHER_CTX_new();
  ~CipherContext() { Crypto().EVP_CIPHER_CTX_free(ctx); }
};

const unsigned char* Bytes(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }

std::string Hex(std::string_view bytes) {
  std::string hex;
  for (char b : bytes) hex += fmt::format("{:02x}", static_cast<unsigned char>(b));
  return hex;
}

}  // namespace

Status LoadChannelCrypto() {
  if (Crypto().error) return *Crypto().error;
  return Ok{};
}

ChannelKey Hmac(std::string_view key, std::string_view message) {
  ChannelKey mac{};
  unsigned int size = 0;
  Crypto().HMAC(Crypto().EVP_sha256(), key.data(), static_cast<int>(key.size()), Bytes(message), message.size(), mac.data(),
                &size);
  return mac;
}

Result<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t have = 0;
  while (have < bytes) {
    ssize_t got = getrandom(raw.data() + have, bytes - have, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Error(ErrorCode::kUnavailable, "connect back", fmt::format("no random bytes: {}", std::strerror(errno)));
    have += static_cast<size_t>(got);
  }
  return Hex(raw);
}

std::string KeyHex(const ChannelKey& key) { return Hex(KeyBytes(key)); }

std::optional<ChannelKey> KeyFromHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  ChannelKey key{};
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < key.size(); ++i) {
    int high = digit(hex[2 * i]), low = digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    key[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return key;
}

bool SameBytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

void RecordSealer::Seal(std::string_view plain, std::string& wire) {
  const Libcrypto& c = Crypto();
  while (!plain.empty()) {
    std::string_view piece = plain.substr(0, kMaxPlain);
    plain.remove_prefix(piece.size());
    size_t start = wire.size();
    wire.resize(start + kLength + piece.size() + kTag);
    auto* out = reinterpret_cast<unsigned char*>(wire.data() + start);
    PutLength(static_cast<uint32_t>(piece.size() + kTag), out);
    std::array<unsigned char, 12> nonce = Nonce(sent_++);
    CipherContext cipher;
    int n = 0;
    c.EVP_EncryptInit_ex(cipher.ctx, c.EVP_aes_256_gcm(), nullptr, key_.data(), nonce.data());
    c.EVP_EncryptUpdate(cipher.ctx, nullptr, &n, out, kLength);  // the length, authenticated
    c.EVP_EncryptUpdate(cipher.ctx, out + kLength, &n, Bytes(piece), static_cast<int>(piece.size()));
    c.EVP_EncryptFinal_ex(cipher.ctx, out + kLength + n, &n);
    c.EVP_CIPHER_CTX_ctrl(cipher.ctx, EVP_CTRL_GCM_GET_TAG, kTag, out + kLength + piece.size());
  }
}

bool RecordOpener::Feed(std::string_view wire, std::string& plain) {
  if (broken_) return false;
  held_.append(wire);
  const Libcrypto& c = Crypto();
  size_t at = 0;
  while (held_.size() - at >= kLength) {
    const auto* record = reinterpret_cast<const unsigned char*>(held_.data() + at);
    size_t size = (size_t{record[0]} << 24) | (size_t{record[1]} << 16) | (size_t{record[2]} << 8) | record[3];
    if (size < kTag || size > RecordSealer::kMaxPlain + kTag) {
      broken_ = true;
      break;
    }
    if (held_.size() - at < kLength + size) break;
    size_t text = size - kTag;
    size_t start = plain.size();
    plain.resize(start + text);
    std::array<unsigned char, 12> nonce = Nonce(opened_++);
    std::array<unsigned char, kTag> tag{};
    std::memcpy(tag.data(), record + kLength + text, kTag);
    CipherContext cipher;
    int n = 0;
    c.EVP_DecryptInit_ex(cipher.ctx, c.EVP_aes_256_gcm(), nullptr, key_.data(), nonce.data());
    c.EVP_DecryptUpdate(cipher.ctx, nullptr, &n, record, kLength);
    c.EVP_DecryptUpdate(cipher.ctx, reinterpret_cast<unsigned char*>(plain.data() + start), &n, record + kLength,
                        static_cast<int>(text));
    c.EVP_CIPHER_CTX_ctrl(cipher.ctx, EVP_CTRL_GCM_SET_TAG, kTag, tag.data());
    unsigned char end[16];
    if (c.EVP_DecryptFinal_ex(cipher.ctx, end, &n) != 1) {
      plain.resize(start);
      broken_ = true;
      break;
    }
    at += kLength + size;
  }
  if (broken_) {
    held_.clear();
    return false;
  }
  held_.erase(0, at);
  return true;
}

}  // namespace topolaunch
