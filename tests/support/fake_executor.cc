#include "support/fake_executor.h"

namespace topolaunch::testing {

class FakeCommand : public RunningCommand {
 public:
  FakeCommand(FakeExecutor* owner, std::string host, FakeExecutor::Script script)
      : owner_(owner), host_(std::move(host)), script_(std::move(script)) {}
  std::optional<ExitInfo> Wait(std::chrono::milliseconds) override {
    if (script_.runs_until_stopped && !stopped_) return std::nullopt;
    return stopped_ ? stop_info_ : script_.exit;
  }
  ExitInfo Stop(std::chrono::milliseconds) override {
    if (!stopped_ && script_.runs_until_stopped) {
      stopped_ = true;
      stop_info_.signal = "TERM";
      owner_->RecordStop(host_);
    }
    return *Wait(std::chrono::milliseconds(0));
  }

 private:
  FakeExecutor* owner_;
  std::string host_;
  FakeExecutor::Script script_;
  bool stopped_ = false;
  ExitInfo stop_info_;
};

std::vector<StartResult> FakeExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
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
    for (const auto& [stream, line] : script.lines)
      if (sink) sink(i, stream, line);
    results.push_back(std::unique_ptr<RunningCommand>(new FakeCommand(this, requests[i].host, script)));
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

void FakeExecutor::RecordStop(const std::string& host) {
  std::lock_guard lock(mutex_);
  stopped_.push_back(host);
}

}  // namespace topolaunch::testing
