// The inside of connect_back_hub.cc, shared with connect_back_hub_handshake.cc
// (the connections not yet proven: admission and the handshake). Not for
// other files.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "launch/connect_back_admission.h"
#include "launch/connect_back_auth.h"
#include "launch/connect_back_hub.h"

namespace topolaunch::hub_internal {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kHelloWait{15'000};  // a connection has this long to prove itself
inline constexpr size_t kHelloLimit = 512;         // the hello and the ready line, each
inline constexpr size_t kReadChunk = 64 << 10;
// Connections not yet proven (connect_back_admission.h): 256 per source, and
// in all room for every node's agent at once and 1,024 more. 2,000 agents
// connecting in the same second each wait a moment; with room for only
// 1,024 in all, half of them were pushed out by the others.
inline constexpr size_t kWaitingPerSource = 256;
inline constexpr size_t kWaitingBeyondNodes = 1024;
inline constexpr int kAcceptsPerRound = 64;  // then the hellos already in are read
inline constexpr milliseconds kAcceptPause{100};  // out of descriptors: the listener rests this long

// One TCP connection: bytes to send, lines read.
struct Link {
  int fd = -1;
  std::string out;       ///< not yet sent
  bool close_out = false;  ///< EOF once `out` is sent
  bool shut = false;       ///< EOF sent
  LineSplitter lines{LineSplitter::kDefaultMaxLine + 16};
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// A connection that has not proven itself yet: first its hello, then,
// once `run` answered it, its ready line.
struct Pending {
  Link link;
  WaitingConnection who;  ///< its address, since when
  std::string got;        ///< what it has sent so far, up to its next line
  Clock::time_point deadline;
  std::optional<size_t> node;  ///< the node its hello proved
  ConnectHello hello;
  RunAnswer answer;
};

struct Emitted {
  size_t node;
  OutputStream stream;
  std::string text;
};

}  // namespace topolaunch::hub_internal

namespace topolaunch {

struct ConnectBackHub::State {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> hosts;
  std::unordered_map<std::string, size_t> index_of;  ///< host -> node
  size_t connected = 0;                               ///< nodes in (proven)
  OutputSink sink;
  std::vector<NodeCredential> credentials;  ///< node i's
  int listen_fd = -1;
  int wake_fd = -1;
  bool quit = false;
  bool stop_listening = false;  ///< AwaitAgents is over: nobody else may connect
  hub_internal::Clock::time_point accept_paused_until{};
  std::thread thread;
  std::vector<hub_internal::Pending> pending;
  struct NodeLink {
    hub_internal::Link link;
    RecordSealer seal;  ///< what `run` sends on `link`
    RecordOpener open;  ///< what the agent sends
    bool connected = false;
    int task = -1;
    std::optional<int> status;     ///< from the exit frame
    std::optional<ExitInfo> ended;
  };
  std::vector<NodeLink> nodes;
  std::vector<std::string> refused;  ///< hellos refused, and why
  std::vector<hub_internal::Emitted> emitted;  ///< lines read, for the sink (the hub's thread only)
  std::function<bool()> step_ended;
  hub_internal::milliseconds step_grace{0};
  std::optional<hub_internal::Clock::time_point> lost_after;

  void Wake() {
    uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof one);
  }
  void Serve();
  void Flush(hub_internal::Link& link);
  void Accept();
  void Queue(int fd, const sockaddr_storage& peer);
  void CloseListener();
  void ReadPending(hub_internal::Pending& p, std::vector<size_t>& ends);
  void ReadNode(size_t i, std::vector<size_t>& ends);
  void Frame(size_t i, std::string_view line);
  void Refuse(hub_internal::Pending& p, const ConnectHello& hello, std::string_view why);
  void Answer(hub_internal::Pending& p, std::string_view line);
  void Admit(hub_internal::Pending& p, std::string_view line, std::string_view rest, std::vector<size_t>& ends);
  void Receive(size_t i, std::string_view wire, std::vector<size_t>& ends);
};

}  // namespace topolaunch
