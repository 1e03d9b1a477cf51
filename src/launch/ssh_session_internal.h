// The SSH executor's libssh2 parts, shared among its files: the library
// itself, opened on first use (ssh_executor_library.cc), session set-up
// (ssh_executor_session.cc), host-key policy (ssh_executor_host_key.cc) and
// the channel pump (ssh_executor_pump.cc), used by ssh_executor.cc.
// The only header that includes <libssh2.h>: include it only from the
// ssh_executor*.cc files, never from another header.
#pragma once

#include <libssh2.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "launch/executor.h"
#include "launch/ssh_executor.h"

// Nested so that these short names stay apart from the rest of the library.
namespace topolaunch::ssh_internal {

// ---- libssh2 itself (ssh_executor_library.cc) ----

// Every libssh2 function the executor calls, without the "libssh2_" prefix.
// libssh2.h's macros (libssh2_session_init(), libssh2_channel_exec(), ...)
// name functions of the library, so call these instead.
#define TOPOLAUNCH_LIBSSH2_FUNCTIONS(X)                                                                           \
  X(init) X(free) X(session_init_ex) X(session_free) X(session_set_timeout) X(session_set_blocking)            \
  X(session_handshake) X(session_disconnect_ex) X(session_last_errno) X(session_last_error)                   \
  X(session_method_pref) X(session_hostkey) X(session_callback_set) X(session_block_directions)               \
  X(hostkey_hash) X(keepalive_config) X(keepalive_send) X(userauth_publickey_fromfile_ex) X(agent_init)       \
  X(agent_set_identity_path) X(agent_connect) X(agent_list_identities) X(agent_get_identity)                  \
  X(agent_userauth) X(agent_disconnect) X(agent_free) X(knownhost_init) X(knownhost_readline)                 \
  X(knownhost_checkp) X(knownhost_addc) X(knownhost_writeline) X(knownhost_free) X(channel_open_ex)           \
  X(channel_process_startup) X(channel_write_ex) X(channel_read_ex) X(channel_send_eof) X(channel_eof)        \
  X(channel_close) X(channel_wait_closed) X(channel_get_exit_status) X(channel_get_exit_signal)               \
  X(channel_free)

/// libssh2's functions, from the library opened on first use: the commands
/// that open no SSH connection (discover, audit, plan, env, bind, and run
/// under srun) do not load it, nor OpenSSL's libcrypto behind it, which cost
/// every start ~3.5 ms and ~140 page faults.
struct Libssh2 {
#define TOPOLAUNCH_LIBSSH2_MEMBER(name) decltype(&::libssh2_##name) name = nullptr;
  TOPOLAUNCH_LIBSSH2_FUNCTIONS(TOPOLAUNCH_LIBSSH2_MEMBER)
#undef TOPOLAUNCH_LIBSSH2_MEMBER
};

/// Opens libssh2 (its soname, libssh2.so.1) and calls libssh2_init, once
/// per process; every call returns that first answer. kUnavailable names
/// the library and what the loader said.
Result<const Libssh2*> OpenLibssh2();

/// The opened library: only after OpenLibssh2() succeeded.
const Libssh2& Ssh2();

/// Where to connect, after ~/.ssh/config.
struct Target {
  std::string alias, address, user;
  int port = 22;
  std::vector<std::string> identity_files;
  std::string Where() const { return port == 22 ? alias : fmt::format("{}:{}", alias, port); }
};

/// Why a connection could not be set up or the command not started;
/// `retry`: dropped before authentication (MaxStartups), so another try may work.
struct Failure {
  ErrorCode code;
  std::string what;
  bool retry = false;
};

/// The result of a command whose connection broke or was closed on it.
inline ExitInfo LostConnection() {
  ExitInfo info;
  info.connection_lost = true;
  return info;
}

/// libssh2's message for the last error on `session`.
std::string LastError(LIBSSH2_SESSION* session);

// ---- Session set-up (ssh_executor_session.cc) ----

/// Connect, key exchange, host key, authentication: one attempt. Sets `fd`
/// and `session` as soon as each exists, also on failure: the caller closes
/// them (and may retry when the failure says so). `known_hosts_mutex`
/// serializes reading and appending to options.known_hosts_file.
std::optional<Failure> OpenSession(const Target& target, const SshOptions& options, std::mutex& known_hosts_mutex,
                                   int& fd, LIBSSH2_SESSION*& session);

// ---- Host-key policy (ssh_executor_host_key.cc) ----

/// Before the handshake: asks the server first for the key types that
/// `known_hosts_text` holds for the target.
void PreferKnownHostKeys(LIBSSH2_SESSION* session, const std::string& known_hosts_text, const Target& target);

/// After the handshake: checks the server's key against the known_hosts
/// file; a changed key fails, an unknown one fails unless accept-new is on
/// (then it is appended, under `known_hosts_mutex`).
std::optional<Failure> CheckHostKey(LIBSSH2_SESSION* session, const Target& target, const SshOptions& options,
                                    std::mutex& known_hosts_mutex);

// ---- The channel pump (ssh_executor_pump.cc) ----

/// What the pump works with, all owned by the running command and alive
/// until PumpChannel returns.
struct PumpEnds {
  LIBSSH2_SESSION* session = nullptr;
  LIBSSH2_CHANNEL* channel = nullptr;  ///< exec request already accepted
  int socket_fd = -1;
  int wake_fd = -1;  ///< read end of the pipe that WriteStdin/CloseStdin/Stop write to; -1: none
  int keepalive_interval_s = 0;
  StdinQueue* stdin_queue = nullptr;  ///< bytes and the EOF request from WriteStdin/CloseStdin
  /// Read once per pass: set by Stop; from then on EOF is sent, and the
  /// connection is given up at that time.
  std::function<std::optional<std::chrono::steady_clock::time_point>()> stop_deadline;
  std::function<void(OutputStream, std::string_view)> emit;  ///< one output line at a time
};

/// Switches the session to non-blocking mode and pumps until the command
/// ends: `stdin_data` and queued stdin out (then EOF if `close_stdin` or
/// asked for), stdout/stderr lines to `emit`, keepalives. Returns the exit
/// status or signal, or LostConnection() when the connection broke or the
/// stop deadline passed. Leaves the session and channel for the caller to free.
ExitInfo PumpChannel(const PumpEnds& ends, std::string stdin_data, bool close_stdin);

}  // namespace topolaunch::ssh_internal
