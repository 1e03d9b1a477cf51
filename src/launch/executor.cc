#include "launch/executor.h"

#include <fmt/format.h>

namespace topolaunch {

std::string ExitInfo::Describe() const {
  if (connection_lost) return "connection lost";
  if (!signal.empty()) return "signal " + signal;
  return fmt::format("exit {}", exit_code);
}

bool StdinQueue::Append(std::string_view data) {
  std::lock_guard lock(mutex_);
  if (!open_) return false;
  queued_.append(data);
  return true;
}

void StdinQueue::RequestClose() {
  std::lock_guard lock(mutex_);
  open_ = false;
  close_requested_ = true;
}

bool StdinQueue::TakeInto(std::string& pending, size_t& written) {
  std::lock_guard lock(mutex_);
  if (!queued_.empty()) {
    pending.erase(0, written);
    written = 0;
    pending += queued_;
    queued_.clear();
  }
  return close_requested_;
}

void StdinQueue::MarkClosed() {
  std::lock_guard lock(mutex_);
  open_ = false;
  queued_.clear();
}

void LineSplitter::Feed(std::string_view bytes, const std::function<void(std::string_view)>& emit) {
  pending_.append(bytes);
  size_t start = 0;
  for (size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
    emit(std::string_view(pending_).substr(start, nl - start));
    start = nl + 1;
  }
  pending_.erase(0, start);
}

void LineSplitter::Flush(const std::function<void(std::string_view)>& emit) {
  if (!pending_.empty()) emit(pending_);
  pending_.clear();
}

}  // namespace topolaunch
