#include "launch/queued_printer.h"

#include <fmt/format.h>

namespace topolaunch {

QueuedLinePrinter::QueuedLinePrinter(LinePrinter& printer, std::function<void(std::string_view)> note, size_t max_bytes)
    : printer_(printer), note_(std::move(note)), max_bytes_(max_bytes), thread_([this] { Drain(); }) {}

QueuedLinePrinter::~QueuedLinePrinter() { Finish(); }

void QueuedLinePrinter::Line(size_t node, OutputStream stream, std::string_view text) {
  {
    std::lock_guard lock(mutex_);
    if (finishing_) {
      ++dropped_;
      return;
    }
    // One line always fits in an empty queue, so no line is too long to print.
    if (!queue_.empty() && queued_bytes_ + text.size() > max_bytes_) {
      ++dropped_;
      if (queue_.back().dropped == 0) queue_.push_back({});
      ++queue_.back().dropped;
      return;
    }
    queue_.push_back({node, stream, std::string(text), 0});
    queued_bytes_ += text.size();
  }
  changed_.notify_one();
}

void QueuedLinePrinter::Drain() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return finishing_ || !queue_.empty(); });
    if (queue_.empty()) break;  // finishing, and nothing left
    Queued line = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= line.text.size();
    lock.unlock();
    if (line.dropped == 0) {
      printer_.Line(line.node, line.stream, line.text);
    } else if (note_) {
      note_(fmt::format("{} output line(s) dropped here: the output was not taken fast enough (a stalled terminal "
                        "or pipe); the job was not held up",
                        line.dropped));
    }
    lock.lock();
  }
}

void QueuedLinePrinter::Finish() {
  {
    std::lock_guard lock(mutex_);
    finishing_ = true;
  }
  changed_.notify_one();
  if (thread_.joinable()) thread_.join();
}

uint64_t QueuedLinePrinter::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace topolaunch
