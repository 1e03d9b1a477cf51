// The remote executor: start commands on hosts, feed their stdin, stream
// their output line by line, wait for them with a time limit, stop them.
//
// One interface, three implementations: LocalExecutor (fork/exec on this
// machine), SshExecutor (libssh2), and a recording FakeExecutor in
// tests/support for the orchestration code above. Time limits are passed
// in; nothing here reads the process environment.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "launch/command.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// One command to start on one host.
struct LaunchRequest {
  std::string host;        ///< where; LocalExecutor ignores it
  Command command{};
  std::string stdin_data{};  ///< written to the command's stdin first
  /// Close stdin once stdin_data is written. False keeps it open until
  /// Stop or the executor's end: `topolaunch agent` reads EOF as "stop".
  bool close_stdin = true;
};

/// How a started command ended.
struct ExitInfo {
  int exit_code = -1;           ///< exit status; -1 when killed by a signal or lost
  std::string signal{};         ///< the signal that ended it ("TERM", "KILL"), "" if none
  bool connection_lost = false; ///< SSH: the connection ended without an exit status
  bool operator==(const ExitInfo&) const = default;
  /// "exit 3", "signal TERM", "connection lost".
  std::string Describe() const;
};

enum class OutputStream { kStdout, kStderr };

/// Receives each complete output line (without its '\n'; a last unterminated
/// line is delivered at the end) of the request at `index`. Calls come from
/// executor threads but never two at once, so a sink needs no lock.
using OutputSink = std::function<void(size_t index, OutputStream stream, std::string_view line)>;

/// A started command. Destroying it stops it (Stop with a short grace).
class RunningCommand {
 public:
  virtual ~RunningCommand() = default;
  /// Waits up to `timeout` for the end: the ExitInfo, or nullopt while it
  /// still runs. Once ended, returns the same ExitInfo on every call.
  virtual std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout) = 0;
  /// Stops it and returns once it has ended. Local: SIGTERM to its process
  /// group, SIGKILL after `grace`. SSH: EOF on stdin (the agent's stop
  /// signal: libssh2 1.10 has no channel signals), then after `grace` the
  /// channel and connection are closed.
  virtual ExitInfo Stop(std::chrono::milliseconds grace) = 0;
  /// Writes more bytes to the command's stdin, after the request's
  /// stdin_data (in order, all of it, without blocking the caller for long).
  /// Errors: kUnavailable when stdin is closed or the command has ended.
  virtual Status WriteStdin(std::string_view data) = 0;
  /// Closes the command's stdin (EOF; `topolaunch agent` reads it as
  /// "stop", or before a launch as "do not start"). Idempotent.
  virtual void CloseStdin() = 0;
  /// The command's process id on this machine (LocalExecutor), -1 when it
  /// runs elsewhere.
  virtual int ProcessId() const { return -1; }
};

using StartResult = Result<std::unique_ptr<RunningCommand>>;

/// Starts commands; see each implementation for how hosts are reached.
class Executor {
 public:
  virtual ~Executor() = default;
  /// Starts every request (in parallel where the implementation can) and
  /// returns one result per request, in order, once each has started or
  /// failed. A failure names the host (kUnavailable, kTimeout or kBadInput).
  /// `sink` must outlive the returned commands.
  virtual std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) = 0;
};

/// An OutputSink shared by an executor's threads: Emit calls it for one
/// at a time, as the OutputSink contract promises. Executors hold it in a
/// shared_ptr so that commands outliving StartAll keep it.
struct SerializedSink {
  std::mutex mutex;
  OutputSink sink;
  void Emit(size_t index, OutputStream stream, std::string_view line) {
    std::lock_guard lock(mutex);
    if (sink) sink(index, stream, line);
  }
};

/// The stdin bytes a caller hands to an executor's pump thread (through
/// RunningCommand::WriteStdin), in order, and the request to close stdin
/// once they are written. Thread-safe; the pump wakes itself up.
class StdinQueue {
 public:
  explicit StdinQueue(bool open) : open_(open) {}
  /// Queues `data`; false once stdin is closed (CloseStdin, MarkClosed).
  bool Append(std::string_view data);
  /// EOF after the queued bytes; later Appends fail.
  void RequestClose();
  /// Pump side: appends the queued bytes to the unwritten part of `pending`
  /// (its first `written` bytes are dropped and `written` reset). Returns
  /// true once a close was requested.
  bool TakeInto(std::string& pending, size_t& written);
  /// Pump side: stdin is gone (EOF sent, the command ended); the queue is dropped.
  void MarkClosed();

 private:
  std::mutex mutex_;
  std::string queued_;
  bool open_;
  bool close_requested_ = false;
};

/// Splits a byte stream into lines for an OutputSink, in bounded memory
/// and linear time. A line ends at '\n', or at '\r' (so that progress bars
/// that redraw with '\r' show; "\r\n" is one end). A line longer than
/// `max_line` bytes is either cut there (kCut: marked with kCutMarker, the
/// rest of it dropped) or split there (kSplit: each piece but the last
/// marked with kSplitMarker, nothing lost), at a UTF-8 character boundary.
class LineSplitter {
 public:
  enum class LongLines { kCut, kSplit };
  static constexpr size_t kDefaultMaxLine = size_t{1} << 20;
  static constexpr std::string_view kCutMarker = " [topolaunch: line cut, longer than the limit]";
  static constexpr std::string_view kSplitMarker = " [topolaunch: line split, it goes on in the next]";
  explicit LineSplitter(size_t max_line = kDefaultMaxLine, LongLines long_lines = LongLines::kCut)
      : max_line_(max_line), long_lines_(long_lines) {}
  /// Consumes `bytes` and calls `emit` for each line completed.
  void Feed(std::string_view bytes, const std::function<void(std::string_view)>& emit);
  /// Emits the unterminated tail, if any.
  void Flush(const std::function<void(std::string_view)>& emit);

 private:
  void Append(std::string_view part, const std::function<void(std::string_view)>& emit);

  size_t max_line_;
  LongLines long_lines_;
  std::string pending_;    ///< the current line so far, at most max_line_ bytes
  bool cutting_ = false;   ///< the current line was cut: drop up to its end
  bool after_cr_ = false;  ///< the last line ended with '\r': a '\n' next ends nothing
};

}  // namespace topolaunch
