#include "launch/queued_printer.h"

#include <fmt/format.h>

namespace topolaunch {

QueuedLinePrinter::QueuedLinePrinter(LinePrinter& printer, std::function<void(std::string_view)> note, size_t max_bytes)
    : printer_(printer), note_(std::move(note)), max_bytes_(max_bytes), thread_([this] { Drain(); }) {}

QueuedLinePrinter::~QueuedLinePrinter() { Finish(); }

void QueuedLinePrinter::Line(const NodeLine& line) {
  std::string_view text = line.text;
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
    queue_.push_back({line.node, line.stream, line.label, std::string(text)});
    queued_bytes_ += text.size();
  }
  changed_.notify_one();
}

void QueuedLinePrinter::Status(std::string_view text) {
  {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    // A status not yet shown is replaced by the newer one.
    if (!queue_.empty() && queue_.back().status) queue_.back().text = text;
    else queue_.push_back({.text = std::string(text), .status = true});
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
    if (!line.status) queued_bytes_ -= line.text.size();
    lock.unlock();
    if (line.status) {
      printer_.Status(line.text);
    } else if (line.dropped == 0) {
      printer_.Line({line.node, line.stream, line.label, line.text});
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
