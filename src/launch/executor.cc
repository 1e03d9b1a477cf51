#include "launch/executor.h"

#include <fmt/format.h>

namespace topolaunch {

std::string ExitInfo::Describe() const {
  if (connection_lost) return "connection lost";
  if (!signal.empty()) return "signal " + signal;
  return fmt::format("exit {}", exit_code);
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
