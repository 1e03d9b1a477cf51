// Session set-up for the SSH executor: TCP connect, SSH handshake (after
// telling libssh2 which host-key types to prefer), the host-key check, and
// authentication with the agent, then the identity files. One attempt;
// retrying and bounding the attempts is ssh_executor.cc's business.
#include "launch/ssh_session_internal.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/text_io.h"

namespace topolaunch::ssh_internal {

using std::chrono::milliseconds;

std::string LastError(LIBSSH2_SESSION* session) {
  char* message = nullptr;
  Ssh2().session_last_error(session, &message, nullptr, 0);
  return message ? message : "unknown libssh2 error";
}

namespace {

// `keepalive_s` > 0: a node that dies without closing the connection
// (power, cable) leaves keepalives unacknowledged, and the kernel drops the
// connection after three intervals instead of TCP's ~15 minutes of
// retransmissions, so `run` sees the node gone and stops the others.
std::optional<Failure> Connect(const Target& target, milliseconds timeout, int keepalive_s, int& fd_out) {
  addrinfo hints{}, *addresses = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  std::string port = std::to_string(target.port);
  if (int rc = getaddrinfo(target.address.c_str(), port.c_str(), &hints, &addresses); rc != 0)
    return Failure{ErrorCode::kUnavailable, fmt::format("cannot resolve \"{}\": {}", target.address, gai_strerror(rc))};
  std::optional<Failure> failure;
  for (addrinfo* a = addresses; a; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, static_cast<int>(timeout.count()));
      if (rc == 0) {
        close(fd);
        failure = Failure{ErrorCode::kTimeout, fmt::format("no answer from port {} within the connect timeout ({} ms)",
                                                           target.port, timeout.count())};
        continue;
      }
      int error = 0;
      socklen_t len = sizeof error;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
      errno = error;
      rc = error ? -1 : 0;
    }
    if (rc != 0) {
      failure = Failure{ErrorCode::kUnavailable, fmt::format("cannot connect to port {}: {}", target.port, std::strerror(errno))};
      close(fd);
      continue;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (keepalive_s > 0) {
      unsigned user_timeout_ms = 3000u * static_cast<unsigned>(keepalive_s);
      setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
    }
    freeaddrinfo(addresses);
    fd_out = fd;
    return std::nullopt;
  }
  freeaddrinfo(addresses);
  return failure.value_or(Failure{ErrorCode::kUnavailable, "no usable address"});
}

bool IsRsaKey(const std::string& private_key_file) {
  Result<std::string> pub = ReadTextFile(private_key_file + ".pub");
  if (pub.ok()) return pub->rfind("ssh-rsa ", 0) == 0;
  Result<std::string> priv = ReadTextFile(private_key_file);
  return priv.ok() && priv->find("BEGIN RSA PRIVATE KEY") != std::string::npos;
}

std::optional<Failure> Authenticate(LIBSSH2_SESSION* session, const Target& target, const SshOptions& options) {
  std::vector<std::string> tried;
  if (!options.agent_socket.empty()) {
    LIBSSH2_AGENT* agent = Ssh2().agent_init(session);
    bool done = false;
    if (agent) {
      Ssh2().agent_set_identity_path(agent, options.agent_socket.c_str());
      if (Ssh2().agent_connect(agent) == 0 && Ssh2().agent_list_identities(agent) == 0) {
        libssh2_agent_publickey *identity = nullptr, *previous = nullptr;
        while (!done && Ssh2().agent_get_identity(agent, &identity, previous) == 0) {
          done = Ssh2().agent_userauth(agent, target.user.c_str(), identity) == 0;
          previous = identity;
        }
        Ssh2().agent_disconnect(agent);
      }
      Ssh2().agent_free(agent);
    }
    if (done) return std::nullopt;
    tried.push_back("ssh-agent");
  }
  std::vector<std::string> rsa_keys;
  for (const std::string& file : target.identity_files) {
    if (access(file.c_str(), R_OK) != 0) continue;
    std::string pub = file + ".pub";
    const char* pub_path = access(pub.c_str(), R_OK) == 0 ? pub.c_str() : nullptr;
    int rc = Ssh2().userauth_publickey_fromfile_ex(session, target.user.c_str(),
                                                   static_cast<unsigned>(target.user.size()), pub_path, file.c_str(), "");
    if (rc == 0) return std::nullopt;
    if (rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_TIMEOUT)
      return Failure{ErrorCode::kUnavailable, "connection lost during authentication: " + LastError(session)};
    tried.push_back(file);
    if (IsRsaKey(file)) rsa_keys.push_back(file);
  }
  std::string what = fmt::format("authentication as \"{}\" failed; tried: {}", target.user,
                                 tried.empty() ? "nothing (no agent, no readable key file)" : fmt::format("{}", fmt::join(tried, ", ")));
  if (!rsa_keys.empty())
    what += fmt::format(". RSA key {} cannot work: libssh2 1.10 signs RSA with SHA-1 (ssh-rsa), which OpenSSH 8.8 "
                        "and later refuse; use an ed25519 or ecdsa key (ssh-keygen -t ed25519)",
                        fmt::join(rsa_keys, ", "));
  return Failure{ErrorCode::kUnavailable, what};
}

}  // namespace

std::optional<Failure> OpenSession(const Target& target, const SshOptions& options, std::mutex& known_hosts_mutex,
                                   int& fd, LIBSSH2_SESSION*& session) {
  if (Result<const Libssh2*> library = OpenLibssh2(); !library.ok())
    return Failure{library.error().code, library.error().Message()};
  if (auto failure = Connect(target, options.connect_timeout, options.keepalive_interval_s, fd)) return failure;
  session = Ssh2().session_init_ex(nullptr, nullptr, nullptr, nullptr);
  if (!session) return Failure{ErrorCode::kInternal, "libssh2_session_init failed"};
  Ssh2().session_set_timeout(session, static_cast<long>(options.connect_timeout.count()));
  Result<std::string> known_text = ReadTextFile(options.known_hosts_file);
  PreferKnownHostKeys(session, known_text.ok() ? *known_text : "", target);
  if (Ssh2().session_handshake(session, fd) != 0) {
    int code = Ssh2().session_last_errno(session);
    // Dropped before or during key exchange: what MaxStartups does.
    bool retry = code != LIBSSH2_ERROR_TIMEOUT;
    ErrorCode kind = code == LIBSSH2_ERROR_TIMEOUT ? ErrorCode::kTimeout : ErrorCode::kUnavailable;
    return Failure{kind, "SSH handshake failed: " + LastError(session), retry};
  }
  if (auto failure = CheckHostKey(session, target, options, known_hosts_mutex)) return failure;
  if (auto failure = Authenticate(session, target, options)) return failure;
  if (options.keepalive_interval_s > 0) Ssh2().keepalive_config(session, 1, options.keepalive_interval_s);
  return std::nullopt;
}

}  // namespace topolaunch::ssh_internal
