// The per-rank output connections (rank_lines.h says what travels on
// them): the agent listens on a Unix socket in a private folder, and each
// worker's `topolaunch bind` connects its stdout and stderr to it before it
// execs the script. The only file that opens these sockets.
//
// The folder is made by mkdtemp (mode 0700, under $TMPDIR or /tmp), so no
// other user can connect or plant a file there; it is removed when the
// collector goes.
#pragma once

#include <poll.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "launch/rank_lines.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// The environment variable that tells `bind` where the agent listens.
inline constexpr const char* kRankOutputEnvName = "TOPOLAUNCH_RANK_OUTPUT";

/// Each line a rank wrote (without its '\n'), with who wrote it. A line
/// longer than kRankLineLimit arrives in marked pieces (LineSplitter's kSplit).
using RankLineSink = std::function<void(RankLabel label, OutputStream stream, std::string_view text)>;

/// A rank line longer than this is split; nothing of it is lost.
inline constexpr size_t kRankLineLimit = size_t{64} << 10;

class RankOutputCollector {
 public:
  /// Makes the folder and the listening socket. Errors: kUnavailable with
  /// the reason (no writable temporary folder, no socket).
  static Result<std::unique_ptr<RankOutputCollector>> Open();
  /// Closes every connection and removes the socket and its folder.
  ~RankOutputCollector();
  RankOutputCollector(const RankOutputCollector&) = delete;
  RankOutputCollector& operator=(const RankOutputCollector&) = delete;

  /// The socket's path, for kRankOutputEnvName.
  const std::string& path() const { return path_; }
  /// Appends the descriptors to poll for input: the socket, then each connection.
  void AppendPollFds(std::vector<pollfd>& fds) const;
  /// Accepts new connections and reads once from each connection that
  /// `ready` (the entries AppendPollFds added, after poll) shows readable.
  void Service(std::span<const pollfd> ready, const RankLineSink& sink);
  /// Once the ranks are gone: reads every connection to its end (each
  /// last line without a newline too), for at most `limit` in all.
  void Drain(std::chrono::milliseconds limit, const RankLineSink& sink);
  /// Connections open now (for tests).
  size_t connections() const { return connections_.size(); }

 private:
  struct Connection;
  RankOutputCollector() = default;
  void Accept();
  bool Read(Connection& connection, const RankLineSink& sink);  // false: ended

  std::string folder_;
  std::string path_;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Connection>> connections_;
};

/// In `bind`, before the exec: connects this process's stdout and stderr
/// to the agent at `path` as rank `label`. A stream torchrun already
/// points at a file (its --redirects) is left as it is. Errors
/// (kUnavailable, with the reason): then nothing was changed on that stream.
Status ConnectRankOutput(const std::string& path, RankLabel label);

}  // namespace topolaunch
