// FakeExecutor's commands are small state machines on a real clock: a
// command may end once started (or once written to, when it waits for a
// write), ends run_time later, and Stop/CloseStdin end it early. Wait
// sleeps on a condition variable until the end or its timeout, so polling
// orchestration code sees the same timing as with real commands.
#include "support/fake_executor.h"

#include <condition_variable>
#include <memory>

namespace topolaunch::testing {

namespace {

using Clock = std::chrono::steady_clock;


}  // namespace

class FakeCommand : public RunningCommand {
 public:
  FakeCommand(FakeExecutor* owner, const LaunchRequest& request, FakeExecutor::Script script,
              std::shared_ptr<SerializedSink> sink, size_t index)
      : owner_(owner), host_(request.host), script_(std::move(script)), sink_(std::move(sink)), index_(index),
        stdin_closed_(request.close_stdin) {
    if (!script_.wait_for_write) may_end_at_ = Clock::now();
    if (stdin_closed_ && script_.wait_for_write) ended_ = ExitInfo{.exit_code = 0};
  }
  ~FakeCommand() override {
    for (const auto& [stream, line] : script_.on_destroy_lines) sink_->Emit(index_, stream, line);
  }

  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      Clock::time_point now = Clock::now();
      if (std::optional<ExitInfo> info = EndedLocked(now)) return info;
      if (now >= deadline) return std::nullopt;
      Clock::time_point wake = deadline;
      if (may_end_at_ && !script_.runs_until_stopped) wake = std::min(wake, *may_end_at_ + script_.run_time);
      changed_.wait_until(lock, wake);
    }
  }

  ExitInfo Stop(std::chrono::milliseconds) override {
    std::unique_lock lock(mutex_);
    if (std::optional<ExitInfo> info = EndedLocked(Clock::now())) return *info;
    ended_ = ExitInfo{.signal = "TERM"};
    changed_.notify_all();
    lock.unlock();
    owner_->RecordStop(host_);
    return ExitInfo{.signal = "TERM"};
  }

  Status WriteStdin(std::string_view data) override {
    bool first = false;
    {
      std::lock_guard lock(mutex_);
      if (EndedLocked(Clock::now())) return Error(ErrorCode::kUnavailable, host_, "the command has ended");
      if (stdin_closed_) return Error(ErrorCode::kUnavailable, host_, "its stdin is closed");
      first = !written_;
      written_ = true;
      if (first && script_.wait_for_write) may_end_at_ = Clock::now();
      owner_->RecordStdin(host_, data, false);
      changed_.notify_all();
    }
    if (first)
      for (const auto& [stream, line] : script_.on_write_lines) sink_->Emit(index_, stream, line);
    return Ok{};
  }

  void CloseStdin() override {
    std::lock_guard lock(mutex_);
    if (stdin_closed_) return;
    stdin_closed_ = true;
    owner_->RecordStdin(host_, "", true);
    bool waiting = script_.wait_for_write && !written_;
    if (!EndedLocked(Clock::now()) && (waiting || script_.runs_until_stopped)) ended_ = ExitInfo{.exit_code = 0};
    changed_.notify_all();
  }

 private:
  // The end, once there is one; fixes a timed end so later calls agree.
  std::optional<ExitInfo> EndedLocked(Clock::time_point now) {
    if (!ended_ && !script_.runs_until_stopped && may_end_at_ && now >= *may_end_at_ + script_.run_time)
      ended_ = script_.exit;
    return ended_;
  }

  FakeExecutor* owner_;
  std::string host_;
  FakeExecutor::Script script_;
  std::shared_ptr<SerializedSink> sink_;
  size_t index_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Clock::time_point> may_end_at_;
  std::optional<ExitInfo> ended_;
  bool stdin_closed_;
  bool written_ = false;
};

std::vector<StartResult> FakeExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  auto serial = std::make_shared<SerializedSink>();
  serial->sink = std::move(sink);
  std::vector<StartResult> results;
  for (size_t i = 0; i < requests.size(); ++i) {
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(requests[i]);
    }
    Script script = scripts_.count(requests[i].host) ? scripts_.at(requests[i].host) : Script{};
    if (script.start_error) {
      results.push_back(*script.start_error);
      continue;
    }
    RecordStdin(requests[i].host, requests[i].stdin_data, requests[i].close_stdin);
    for (const auto& [stream, line] : script.lines) serial->Emit(i, stream, line);
    results.push_back(std::unique_ptr<RunningCommand>(new FakeCommand(this, requests[i], script, serial, i)));
  }
  return results;
}

std::vector<LaunchRequest> FakeExecutor::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::vector<std::string> FakeExecutor::stopped() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

std::string FakeExecutor::stdin_written(const std::string& host) const {
  std::lock_guard lock(mutex_);
  auto it = stdin_written_.find(host);
  return it == stdin_written_.end() ? "" : it->second;
}

bool FakeExecutor::stdin_closed(const std::string& host) const {
  std::lock_guard lock(mutex_);
  auto it = stdin_closed_.find(host);
  return it != stdin_closed_.end() && it->second;
}

void FakeExecutor::RecordStop(const std::string& host) {
  std::lock_guard lock(mutex_);
  stopped_.push_back(host);
}

void FakeExecutor::RecordStdin(const std::string& host, std::string_view data, bool closed) {
  std::lock_guard lock(mutex_);
  stdin_written_[host].append(data);
  if (closed) stdin_closed_[host] = true;
}

}  // namespace topolaunch::testing
