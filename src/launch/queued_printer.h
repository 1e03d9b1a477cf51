// A LinePrinter that never blocks its caller: lines go into a bounded queue
// that one thread hands to the real printer. The session prints from the
// executors' pump threads, and those threads also carry the heartbeats and
// the stop to the nodes: a terminal that stops reading (a pipe into a slow
// reader, Ctrl-Z) must cost lines, never the job. When the queue is full,
// new lines are dropped and counted; a note in their place says how many.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "launch/run_session.h"

namespace topolaunch {

class QueuedLinePrinter : public LinePrinter {
 public:
  /// `note` receives the drop notes (from the printing thread, between
  /// lines). `max_bytes` bounds the text waiting in the queue.
  QueuedLinePrinter(LinePrinter& printer, std::function<void(std::string_view)> note,
                    size_t max_bytes = size_t{16} << 20);
  /// Finish()es.
  ~QueuedLinePrinter() override;
  QueuedLinePrinter(const QueuedLinePrinter&) = delete;
  QueuedLinePrinter& operator=(const QueuedLinePrinter&) = delete;

  /// Queues the line, or drops it when the queue is full. Never waits for the printer.
  void Line(const NodeLine& line) override;
  /// Queues the status (never dropped; one not yet shown is replaced).
  void Status(std::string_view text) override;

  /// Prints what is queued (waiting for the printer as long as it takes),
  /// then stops the thread; later lines are dropped. Idempotent.
  void Finish();

  /// Lines dropped so far because the queue was full.
  uint64_t dropped() const;

 private:
  struct Queued {
    size_t node = 0;
    OutputStream stream = OutputStream::kStdout;
    RankLabel label{};
    std::string text;
    uint64_t dropped = 0;  ///< > 0: not a line but the place where this many were dropped
    bool status = false;   ///< not a line but a Status
  };
  void Drain();

  LinePrinter& printer_;
  std::function<void(std::string_view)> note_;
  size_t max_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Queued> queue_;
  size_t queued_bytes_ = 0;
  uint64_t dropped_ = 0;  ///< in all
  bool finishing_ = false;
  std::thread thread_;
};

}  // namespace topolaunch
