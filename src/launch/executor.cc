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

namespace {

// Where `text` may end without ending inside a UTF-8 character: before the
// lead byte of an unfinished one at its end, else its size.
size_t CharacterBoundary(std::string_view text) {
  size_t end = text.size();
  size_t back = 0;  // continuation bytes at the end
  while (back < 3 && back < end && (static_cast<unsigned char>(text[end - 1 - back]) & 0xC0) == 0x80) ++back;
  if (back == end) return end;
  auto lead = static_cast<unsigned char>(text[end - 1 - back]);
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return length > back + 1 ? end - 1 - back : end;
}

}  // namespace

void LineSplitter::Append(std::string_view part, const std::function<void(std::string_view)>& emit) {
  if (part.empty()) return;
  after_cr_ = false;
  while (!cutting_ && pending_.size() + part.size() > max_line_) {
    size_t room = max_line_ - pending_.size();
    pending_.append(part.substr(0, room));
    part.remove_prefix(room);
    size_t boundary = CharacterBoundary(pending_);
    if (boundary == 0) boundary = pending_.size();  // a limit shorter than one character
    std::string unfinished = pending_.substr(boundary);  // the start of a character the piece must not split
    pending_.resize(boundary);
    pending_.append(long_lines_ == LongLines::kSplit ? kSplitMarker : kCutMarker);
    emit(pending_);
    pending_.clear();
    if (long_lines_ == LongLines::kCut) cutting_ = true;
    else pending_ = std::move(unfinished);
  }
  if (!cutting_) pending_.append(part);
}

void LineSplitter::Feed(std::string_view bytes, const std::function<void(std::string_view)>& emit) {
  while (!bytes.empty()) {
    size_t end = bytes.find_first_of("\r\n");
    if (end == std::string_view::npos) {
      Append(bytes, emit);
      return;
    }
    char terminator = bytes[end];
    bool empty = end == 0 && pending_.empty() && !cutting_;
    Append(bytes.substr(0, end), emit);
    bytes.remove_prefix(end + 1);
    if (empty && (after_cr_ || terminator == '\r')) {
      // "\r\n" ends one line, and a '\r' that starts a redraw ends none.
      after_cr_ = terminator == '\r';
      continue;
    }
    if (!cutting_) emit(pending_);
    pending_.clear();
    cutting_ = false;
    after_cr_ = terminator == '\r';
  }
}

void LineSplitter::Flush(const std::function<void(std::string_view)>& emit) {
  if (!pending_.empty() && !cutting_) emit(pending_);
  pending_.clear();
  cutting_ = false;
  after_cr_ = false;
}

}  // namespace topolaunch
