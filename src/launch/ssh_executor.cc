// One thread per connection. Each thread first takes a connection slot
// (max_parallel_connects overall, max_connects_per_host per sshd), connects, exchanges keys, checks the
// host key and authenticates, then releases the slot: sshd's MaxStartups
// counts only unauthenticated connections, so bounding this phase is enough
// for any number of hosts. A connection dropped during the banner or key
// exchange (MaxStartups' random early drop) is retried with jittered
// exponential backoff; a refused or timed-out connection is not.
//
// After the exec request the thread switches the session to non-blocking
// mode and pumps: stdin data out, stdout/stderr lines to the sink, keepalives,
// and the stop request (EOF on stdin; after the grace period the connection
// is closed). WriteStdin and CloseStdin only queue bytes and the EOF for the
// thread (libssh2 sessions are not thread-safe) and wake it through a pipe.
// While pumping, socket sends go through SendWholePacket (see there), so a
// large stdin over a slow link does not break the session.
// The only file that includes <libssh2.h>.
#include "launch/ssh_executor.h"

#include <fcntl.h>
#include <libssh2.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/text_io.h"

namespace topolaunch {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Bounds connection set-ups: `per_host` at a time to one sshd (MaxStartups
// counts per server, so a cluster of many sshds can take many set-ups at
// once) and `total` over all of them.
class ConnectSlots {
 public:
  ConnectSlots(int total, int per_host) : free_(std::max(1, total)), per_host_(std::max(1, per_host)) {}
  void Acquire(const std::string& server) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return free_ > 0 && busy_[server] < per_host_; });
    --free_;
    ++busy_[server];
  }
  void Release(const std::string& server) {
    {
      std::lock_guard lock(mutex_);
      ++free_;
      if (--busy_[server] == 0) busy_.erase(server);
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int free_;
  const int per_host_;
  std::map<std::string, int> busy_;
};

struct SshExecutorState {
  SshOptions options;
  ConnectSlots connect_slots;
  std::mutex known_hosts_mutex;  // accept-new appends one line at a time
  explicit SshExecutorState(SshOptions o)
      : options(std::move(o)), connect_slots(options.max_parallel_connects, options.max_connects_per_host) {}
};

namespace {

// Where to connect, after ~/.ssh/config.
struct Target {
  std::string alias, address, user;
  int port = 22;
  std::vector<std::string> identity_files;
  std::string Where() const { return port == 22 ? alias : fmt::format("{}:{}", alias, port); }
};

struct Failure {
  ErrorCode code;
  std::string what;
  bool retry = false;
};

// libssh2 1.10 cannot send a packet while another is half sent: the next
// send of any other packet (EOF, a keepalive, the window adjustment inside
// a channel read) fails with LIBSSH2_ERROR_BAD_USE, and a half-sent
// keepalive is never finished at all. In non-blocking mode a half-sent
// packet happens whenever the socket buffer fills (a slow link). So the
// pump's sends wait for room until the packet is out; sshd keeps reading
// its socket whatever the channel windows say, so this waits only for the
// network, and gives up (leaving the packet half sent) after kSendStall.
constexpr milliseconds kSendStall{10'000};

LIBSSH2_SEND_FUNC(SendWholePacket) {
  (void)abstract;
  const char* bytes = static_cast<const char*>(buffer);
  size_t sent = 0;
  Clock::time_point limit = Clock::now() + kSendStall;
  while (sent < length) {
    ssize_t n = send(socket, bytes + sent, length - sent, flags);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      int error = errno;
      return sent ? static_cast<ssize_t>(sent) : -error;
    }
    auto left = std::chrono::duration_cast<milliseconds>(limit - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{socket, POLLOUT, 0};
    poll(&p, 1, static_cast<int>(std::min<long>(left, 100)));
  }
  return sent ? static_cast<ssize_t>(sent) : -EAGAIN;
}

ExitInfo LostConnection() {
  ExitInfo info;
  info.connection_lost = true;
  return info;
}

std::string LastError(LIBSSH2_SESSION* session) {
  char* message = nullptr;
  libssh2_session_last_error(session, &message, nullptr, 0);
  return message ? message : "unknown libssh2 error";
}

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
  libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, pref.c_str());
}

std::string Fingerprint(LIBSSH2_SESSION* session) {
  const auto* hash = reinterpret_cast<const unsigned char*>(libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256));
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

namespace {

std::optional<Failure> CheckHostKey(LIBSSH2_SESSION* session, const Target& target, SshExecutorState& state) {
  const SshOptions& options = state.options;
  size_t key_len = 0;
  int key_type = 0;
  const char* key = libssh2_session_hostkey(session, &key_len, &key_type);
  if (!key) return Failure{ErrorCode::kUnavailable, "the server sent no host key"};
  LIBSSH2_KNOWNHOSTS* known = libssh2_knownhost_init(session);
  std::lock_guard lock(state.known_hosts_mutex);
  libssh2_knownhost_readfile(known, options.known_hosts_file.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
  int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | KnownHostKeyBit(key_type);
  libssh2_knownhost* found = nullptr;
  int check = libssh2_knownhost_checkp(known, target.address.c_str(), target.port, key, key_len, mask, &found);
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
    if (libssh2_knownhost_addc(known, entry.c_str(), nullptr, key, key_len, nullptr, 0, typemask, &added) != 0 ||
        libssh2_knownhost_writeline(known, added, line, sizeof line, &line_len, LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
      failure = Failure{ErrorCode::kInternal, "cannot format the host key for known_hosts: " + LastError(session)};
    } else {
      int fd = open(options.known_hosts_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0 || write(fd, line, line_len) != static_cast<ssize_t>(line_len))
        failure = Failure{ErrorCode::kUnavailable, fmt::format("cannot append to {}: {}", options.known_hosts_file,
                                                               std::strerror(errno))};
      if (fd >= 0) close(fd);
    }
  }
  libssh2_knownhost_free(known);
  return failure;
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
    LIBSSH2_AGENT* agent = libssh2_agent_init(session);
    bool done = false;
    if (agent) {
      libssh2_agent_set_identity_path(agent, options.agent_socket.c_str());
      if (libssh2_agent_connect(agent) == 0 && libssh2_agent_list_identities(agent) == 0) {
        libssh2_agent_publickey *identity = nullptr, *previous = nullptr;
        while (!done && libssh2_agent_get_identity(agent, &identity, previous) == 0) {
          done = libssh2_agent_userauth(agent, target.user.c_str(), identity) == 0;
          previous = identity;
        }
        libssh2_agent_disconnect(agent);
      }
      libssh2_agent_free(agent);
    }
    if (done) return std::nullopt;
    tried.push_back("ssh-agent");
  }
  std::vector<std::string> rsa_keys;
  for (const std::string& file : target.identity_files) {
    if (access(file.c_str(), R_OK) != 0) continue;
    std::string pub = file + ".pub";
    const char* pub_path = access(pub.c_str(), R_OK) == 0 ? pub.c_str() : nullptr;
    int rc = libssh2_userauth_publickey_fromfile_ex(session, target.user.c_str(),
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

namespace {

class SshCommand : public RunningCommand {
 public:
  SshCommand(std::shared_ptr<SshExecutorState> state, std::shared_ptr<SerializedSink> sink, size_t index,
             LaunchRequest request)
      : state_(std::move(state)), sink_(std::move(sink)), index_(index), request_(std::move(request)),
        stdin_(!request_.close_stdin) {
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;  // then the pump polls slower
  }
  ~SshCommand() override {
    if (thread_.joinable()) {
      Stop(milliseconds(2000));
      thread_.join();
    }
    if (wake_[0] >= 0) close(wake_[0]), close(wake_[1]);
  }

  // Runs the connection on its own thread; the future says when it started.
  std::future<std::optional<Failure>> Launch(Target target) {
    std::future<std::optional<Failure>> started = started_.get_future();
    thread_ = std::thread([this, target = std::move(target)] { Run(target); });
    return started;
  }

  std::optional<ExitInfo> Wait(milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    if (!done_.wait_for(lock, timeout, [this] { return info_.has_value(); })) return std::nullopt;
    return info_;
  }

  ExitInfo Stop(milliseconds grace) override {
    {
      std::lock_guard lock(mutex_);
      if (!stop_deadline_) stop_deadline_ = Clock::now() + grace;
    }
    stdin_.MarkClosed();
    WakePump();
    return *Wait(std::chrono::hours(24));
  }

  Status WriteStdin(std::string_view data) override {
    if (!stdin_.Append(data)) {
      std::lock_guard lock(mutex_);
      return Error(ErrorCode::kUnavailable, request_.host, info_ ? "the command has ended" : "its stdin is closed");
    }
    WakePump();
    return Ok{};
  }

  void CloseStdin() override {
    stdin_.RequestClose();
    WakePump();
  }

 private:
  void Run(const Target& target);
  std::optional<Failure> Open(const Target& target);
  std::optional<Failure> Exec(const std::string& line);
  ExitInfo Pump();
  void Emit(OutputStream stream, std::string_view line) { sink_->Emit(index_, stream, line); }
  void Finish(ExitInfo info) {
    std::lock_guard lock(mutex_);
    info_ = std::move(info);
    stdin_.MarkClosed();
    done_.notify_all();
  }
  // A full pipe already means "wake up".
  void WakePump() {
    if (wake_[1] >= 0) (void)!write(wake_[1], "", 1);
  }
  void Close() {
    if (channel_) libssh2_channel_free(channel_), channel_ = nullptr;
    if (session_) {
      libssh2_session_disconnect(session_, "topolaunch: done");
      libssh2_session_free(session_), session_ = nullptr;
    }
    if (fd_ >= 0) close(fd_), fd_ = -1;
  }
  void WaitSocket(int timeout_ms) {
    int directions = libssh2_session_block_directions(session_);
    short events = POLLIN;  // always read: the peer may send data or close
    if (directions & LIBSSH2_SESSION_BLOCK_OUTBOUND) events |= POLLOUT;
    pollfd p[2] = {{fd_, events, 0}, {wake_[0], POLLIN, 0}};
    poll(p, 2, timeout_ms);
    char drain[64];
    if (p[1].revents & POLLIN)
      while (read(wake_[0], drain, sizeof drain) > 0) {}
  }

  std::shared_ptr<SshExecutorState> state_;
  std::shared_ptr<SerializedSink> sink_;
  size_t index_;
  LaunchRequest request_;
  std::thread thread_;
  std::promise<std::optional<Failure>> started_;
  int fd_ = -1;
  LIBSSH2_SESSION* session_ = nullptr;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<ExitInfo> info_;
  std::optional<Clock::time_point> stop_deadline_;
  int wake_[2] = {-1, -1};        // WriteStdin/CloseStdin/Stop -> pump
  StdinQueue stdin_;              // WriteStdin/CloseStdin -> pump
};

// Connect, key exchange, host key, authentication: one attempt.
std::optional<Failure> SshCommand::Open(const Target& target) {
  const SshOptions& options = state_->options;
  if (auto failure = Connect(target, options.connect_timeout, options.keepalive_interval_s, fd_)) return failure;
  session_ = libssh2_session_init();
  if (!session_) return Failure{ErrorCode::kInternal, "libssh2_session_init failed"};
  libssh2_session_set_timeout(session_, static_cast<long>(options.connect_timeout.count()));
  Result<std::string> known_text = ReadTextFile(options.known_hosts_file);
  PreferKnownHostKeys(session_, known_text.ok() ? *known_text : "", target);
  if (libssh2_session_handshake(session_, fd_) != 0) {
    int code = libssh2_session_last_errno(session_);
    // Dropped before or during key exchange: what MaxStartups does.
    bool retry = code != LIBSSH2_ERROR_TIMEOUT;
    ErrorCode kind = code == LIBSSH2_ERROR_TIMEOUT ? ErrorCode::kTimeout : ErrorCode::kUnavailable;
    return Failure{kind, "SSH handshake failed: " + LastError(session_), retry};
  }
  if (auto failure = CheckHostKey(session_, target, *state_)) return failure;
  if (auto failure = Authenticate(session_, target, options)) return failure;
  if (options.keepalive_interval_s > 0) libssh2_keepalive_config(session_, 1, options.keepalive_interval_s);
  return std::nullopt;
}

std::optional<Failure> SshCommand::Exec(const std::string& line) {
  channel_ = libssh2_channel_open_session(session_);
  if (!channel_) return Failure{ErrorCode::kUnavailable, "cannot open a session channel: " + LastError(session_)};
  if (libssh2_channel_exec(channel_, line.c_str()) != 0)
    return Failure{ErrorCode::kUnavailable, "the exec request was refused: " + LastError(session_)};
  return std::nullopt;
}

void SshCommand::Run(const Target& target) {
  const SshOptions& options = state_->options;
  Result<std::string> line = RenderShellCommand(request_.command);
  if (!line.ok()) {
    started_.set_value(Failure{ErrorCode::kBadInput, line.error().Message()});
    return Finish(LostConnection());
  }
  std::optional<Failure> failure;
  std::mt19937 random(std::random_device{}());
  milliseconds delay = options.retry_backoff;
  for (int attempt = 1; attempt <= std::max(1, options.connect_attempts); ++attempt) {
    std::string server = fmt::format("{}:{}", target.address, target.port);
    state_->connect_slots.Acquire(server);
    failure = Open(target);
    state_->connect_slots.Release(server);
    if (!failure || !failure->retry || attempt == options.connect_attempts) break;
    Close();
    std::uniform_int_distribution<long> jitter(delay.count() / 2, delay.count() * 3 / 2);
    std::this_thread::sleep_for(milliseconds(jitter(random)));
    delay *= 2;
  }
  if (!failure) failure = Exec(*line);
  started_.set_value(failure);
  if (failure) {
    Close();
    return Finish(LostConnection());
  }
  ExitInfo info = Pump();
  Close();
  Finish(info);
}

ExitInfo SshCommand::Pump() {
  void* plain_send =
      libssh2_session_callback_set(session_, LIBSSH2_CALLBACK_SEND, reinterpret_cast<void*>(&SendWholePacket));
  libssh2_session_set_blocking(session_, 0);
  std::string data = request_.stdin_data;
  bool close_stdin = request_.close_stdin;
  size_t written = 0;
  bool eof_sent = false, lost = false, forced = false;
  LineSplitter splitters[2];
  char buf[32768];
  while (!lost) {
    std::optional<Clock::time_point> deadline;
    {
      std::lock_guard lock(mutex_);
      deadline = stop_deadline_;
    }
    close_stdin |= stdin_.TakeInto(data, written);
    if (deadline && Clock::now() >= *deadline) {
      forced = true;
      break;
    }
    bool more_to_write = false;  // wrote a packet and have more: no pause
    if (written < data.size() && !deadline) {
      ssize_t n = libssh2_channel_write(channel_, data.data() + written, data.size() - written);
      if (n > 0) written += static_cast<size_t>(n), more_to_write = written < data.size();
      else if (n != LIBSSH2_ERROR_EAGAIN && n != 0) lost = true;  // 0: no window yet
    }
    bool want_eof = deadline || (written == data.size() && close_stdin);
    if (want_eof && !eof_sent) {
      int rc = libssh2_channel_send_eof(channel_);
      if (rc == 0) {
        eof_sent = true;
        stdin_.MarkClosed();
      } else if (rc != LIBSSH2_ERROR_EAGAIN) {
        lost = true;
      }
    }
    for (int stream = 0; stream < 2 && !lost; ++stream) {
      for (;;) {
        ssize_t n = libssh2_channel_read_ex(channel_, stream, buf, sizeof buf);
        if (n == LIBSSH2_ERROR_EAGAIN || n == 0) break;
        if (n < 0) {
          lost = true;
          break;
        }
        auto kind = stream == 0 ? OutputStream::kStdout : OutputStream::kStderr;
        splitters[stream].Feed({buf, static_cast<size_t>(n)}, [&](std::string_view l) { Emit(kind, l); });
      }
    }
    if (lost || libssh2_channel_eof(channel_)) break;
    int next_keepalive = 0;
    if (state_->options.keepalive_interval_s > 0 &&
        libssh2_keepalive_send(session_, &next_keepalive) != 0 &&
        libssh2_session_last_errno(session_) != LIBSSH2_ERROR_EAGAIN)
      lost = true;
    WaitSocket(more_to_write ? 0 : 50);
  }
  stdin_.MarkClosed();
  for (int stream = 0; stream < 2; ++stream) {
    auto kind = stream == 0 ? OutputStream::kStdout : OutputStream::kStderr;
    splitters[stream].Flush([&](std::string_view l) { Emit(kind, l); });
  }
  if (lost || forced) {
    // Closing a stuck connection must not wait for the network.
    libssh2_session_callback_set(session_, LIBSSH2_CALLBACK_SEND, plain_send);
    return LostConnection();
  }
  // The exit status may follow the EOF: wait (briefly) for the channel close.
  Clock::time_point limit = Clock::now() + std::chrono::seconds(5);
  int rc;
  while ((rc = libssh2_channel_close(channel_)) == LIBSSH2_ERROR_EAGAIN && Clock::now() < limit) WaitSocket(50);
  while ((rc = libssh2_channel_wait_closed(channel_)) == LIBSSH2_ERROR_EAGAIN && Clock::now() < limit) WaitSocket(50);
  if (rc != 0) return LostConnection();
  ExitInfo info;
  char* signal_name = nullptr;
  size_t signal_len = 0;
  libssh2_channel_get_exit_signal(channel_, &signal_name, &signal_len, nullptr, nullptr, nullptr, nullptr);
  if (signal_name) {
    info.signal.assign(signal_name, signal_len);
    libssh2_free(session_, signal_name);
  } else {
    info.exit_code = libssh2_channel_get_exit_status(channel_);
  }
  return info;
}

Target ResolveTarget(const std::string& host, const SshOptions& options) {
  SshHostSettings settings = ResolveSshHost(options.config, host, options.home, options.local_user);
  Target target;
  target.alias = host;
  target.address = settings.host_name.value_or(host);
  target.user = settings.user.value_or(options.local_user);
  target.port = settings.port.value_or(22);
  target.identity_files = settings.identity_files;
  target.identity_files.insert(target.identity_files.end(), options.identity_files.begin(), options.identity_files.end());
  return target;
}

}  // namespace

SshExecutor::SshExecutor(SshOptions options) : state_(std::make_shared<SshExecutorState>(std::move(options))) {
  static std::once_flag once;
  std::call_once(once, [] { libssh2_init(0); });
}

SshExecutor::~SshExecutor() = default;

std::vector<StartResult> SshExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  auto shared_sink = std::make_shared<SerializedSink>();
  shared_sink->sink = std::move(sink);
  std::vector<std::unique_ptr<SshCommand>> commands;
  std::vector<std::future<std::optional<Failure>>> started;
  std::vector<StartResult> results;
  std::vector<Target> targets;
  for (size_t i = 0; i < requests.size(); ++i) {
    targets.push_back(ResolveTarget(requests[i].host, state_->options));
    commands.push_back(std::make_unique<SshCommand>(state_, shared_sink, i, requests[i]));
    if (Status host = CheckRemoteHost(requests[i].host); !host.ok()) {
      commands.back().reset();
      started.emplace_back();
      continue;
    }
    started.push_back(commands.back()->Launch(targets.back()));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!commands[i]) {
      results.push_back(CheckRemoteHost(requests[i].host).error());
      continue;
    }
    std::optional<Failure> failure = started[i].get();
    if (failure) {
      std::string where = targets[i].user + "@" + targets[i].Where();
      results.push_back(Error(failure->code, where, failure->what));
    } else {
      results.push_back(std::unique_ptr<RunningCommand>(std::move(commands[i])));
    }
  }
  return results;
}

}  // namespace topolaunch
