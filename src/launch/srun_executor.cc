#include "launch/srun_executor.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/hostlist.h"
#include "launch/connect_back_hub.h"
#include "launch/srun_step_env.h"

namespace topolaunch {

Command SrunStepCommand(const std::string& srun, const std::vector<std::string>& hosts, const Command& inner,
                        const std::vector<std::string>& extra) {
  std::string n = std::to_string(hosts.size());
  std::vector<std::string> sorted = hosts;  // Slurm numbers the tasks in its own order anyway; sorted compresses best
  std::sort(sorted.begin(), sorted.end());
  Command step;
  step.argv = {srun,          "--nodes=" + n, "--ntasks=" + n, "--ntasks-per-node=1", "--nodelist=" + CompressHostList(sorted),
               "--overlap",   "--kill-on-bad-exit=1", "--unbuffered", "--label", "--quiet"};
  step.argv.insert(step.argv.end(), StepFixedOptions().begin(), StepFixedOptions().end());
  step.argv.insert(step.argv.end(), extra.begin(), extra.end());
  if (!inner.cwd.empty()) step.argv.push_back("--chdir=" + inner.cwd);
  step.argv.push_back("--");
  step.argv.insert(step.argv.end(), inner.argv.begin(), inner.argv.end());
  step.env = inner.env;
  step.unset.assign(StepShapingVariables().begin(), StepShapingVariables().end());
  return step;
}

namespace {

using std::chrono::milliseconds;

// srun's own output: what an agent wrote before it connected back (labelled
// "  TASK: text" by --label) and srun's messages ("srun: error: node2: task
// 1: Exited with exit code 1"). Held until the tasks are known, then each
// goes to its node: a label by its task, a message by the host it names,
// else to the first node.
class StepLines {
 public:
  StepLines(std::vector<std::string> hosts, std::shared_ptr<SerializedSink> sink)
      : hosts_(std::move(hosts)), sink_(std::move(sink)) {}

  void Take(OutputStream stream, std::string_view line) {
    std::lock_guard lock(mutex_);
    if (!placed_) {
      held_.push_back({stream, std::string(line)});
      if (held_.size() > kHeld) held_.pop_front();
      return;
    }
    Route(stream, line);
  }

  /// The tasks are known (task t is node tasks[t]): the held lines go out,
  /// unless no agent connected (then they are in every host's error).
  void Place(std::vector<std::optional<size_t>> tasks) {
    std::lock_guard lock(mutex_);
    tasks_ = std::move(tasks);
    placed_ = true;
    if (std::none_of(tasks_.begin(), tasks_.end(), [](const std::optional<size_t>& node) { return node.has_value(); })) return;
    for (const auto& [stream, line] : held_) Route(stream, line);
  }

  /// srun's last lines before the tasks were known, for an error.
  std::string HeldText() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> lines;
    for (const auto& held : held_) lines.push_back(held.second);
    if (lines.size() > 5) lines.erase(lines.begin(), lines.end() - 5);
    return fmt::format("{}", fmt::join(lines, " | "));
  }

 private:
  static constexpr size_t kHeld = 200;

  void Route(OutputStream stream, std::string_view line) {
    size_t node = 0;
    size_t digits = line.find_first_not_of(' ');
    size_t colon = line.find(": ");
    int task = -1;
    if (digits != std::string_view::npos && colon != std::string_view::npos && colon > digits && colon - digits <= 8 &&
        std::all_of(line.begin() + static_cast<long>(digits), line.begin() + static_cast<long>(colon),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      task = std::stoi(std::string(line.substr(digits, colon - digits)));
    if (task >= 0 && static_cast<size_t>(task) < tasks_.size() && tasks_[static_cast<size_t>(task)]) {
      node = *tasks_[static_cast<size_t>(task)];
      line.remove_prefix(colon + 2);
    } else {
      for (size_t i = 0; i < hosts_.size(); ++i)
        if (line.find(" " + hosts_[i] + ":") != std::string_view::npos) node = i;
    }
    sink_->Emit(node, stream, line);
  }

  std::mutex mutex_;
  std::vector<std::string> hosts_;
  std::shared_ptr<SerializedSink> sink_;
  bool placed_ = false;
  std::vector<std::optional<size_t>> tasks_;
  std::deque<std::pair<OutputStream, std::string>> held_;
};

// The step: srun and the agents' connections. The last node's command to
// go closes every connection and lets srun end, or stops it.
struct Step {
  std::unique_ptr<ConnectBackHub> hub;
  std::unique_ptr<RunningCommand> srun;
  ~Step() {
    hub.reset();  // EOF to every agent still connected: they stop their workers
    if (srun && !srun->Wait(SrunExecutor::kCancelGrace)) srun->Stop(SrunExecutor::kCancelGrace);
  }
};

class StepTask : public RunningCommand {
 public:
  StepTask(std::shared_ptr<Step> step, size_t node) : step_(std::move(step)), node_(node) {}
  std::optional<ExitInfo> Wait(milliseconds timeout) override { return step_->hub->Wait(node_, timeout); }
  ExitInfo Stop(milliseconds grace) override {
    step_->hub->CloseStdin(node_);  // the agent's "stop": SIGTERM to its workers, SIGKILL after their grace
    if (std::optional<ExitInfo> ended = step_->hub->Wait(node_, grace)) return *ended;
    return step_->hub->Drop(node_);
  }
  Status WriteStdin(std::string_view data) override { return step_->hub->WriteStdin(node_, data); }
  void CloseStdin() override { step_->hub->CloseStdin(node_); }
  int ProcessId() const override { return step_->srun->ProcessId(); }

 private:
  std::shared_ptr<Step> step_;
  size_t node_;
};

std::vector<StartResult> AllFail(size_t n, const Error& error) {
  std::vector<StartResult> results;
  for (size_t i = 0; i < n; ++i) results.emplace_back(error);
  return results;
}

}  // namespace

std::vector<StartResult> SrunExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  if (requests.empty()) return {};
  std::vector<std::string> hosts;
  for (const LaunchRequest& request : requests) {
    if (request.command != requests.front().command)
      return AllFail(requests.size(), Error(ErrorCode::kInternal, request.host, "srun starts one command on every node"));
    hosts.push_back(request.host);
  }
  auto shared_sink = std::make_shared<SerializedSink>();
  shared_sink->sink = std::move(sink);
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open(
      hosts, [shared_sink](size_t i, OutputStream stream, std::string_view line) { shared_sink->Emit(i, stream, line); },
      listen_);
  if (!hub.ok()) return AllFail(requests.size(), hub.error());
  auto lines = std::make_shared<StepLines>(hosts, shared_sink);
  LaunchRequest srun_request{"", SrunStepCommand(srun_, hosts, requests.front().command, step_options_),
                             FormatConnectBack((*hub)->where()), true};
  std::vector<StartResult> started = base_->StartAll(
      {&srun_request, 1}, [lines](size_t, OutputStream stream, std::string_view line) { lines->Take(stream, line); });
  if (!started[0].ok()) return AllFail(requests.size(), started[0].error());
  auto step = std::make_shared<Step>();
  step->hub = std::move(hub).value();
  step->srun = std::move(started[0]).value();
  RunningCommand* srun = step->srun.get();
  auto srun_ended = [srun] { return srun->Wait(milliseconds(0)).has_value(); };
  step->hub->WatchStep(srun_ended, kLostAfterStep);
  std::vector<std::optional<std::string>> missing = step->hub->AwaitAgents(connect_timeout_, srun_ended);
  std::vector<std::optional<size_t>> tasks(hosts.size());
  for (size_t t = 0; t < tasks.size(); ++t) tasks[t] = step->hub->NodeOfTask(static_cast<int>(t));
  std::string held = lines->HeldText();
  lines->Place(std::move(tasks));
  std::vector<StartResult> results;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (missing[i]) {
      std::optional<ExitInfo> srun_exit = srun->Wait(milliseconds(0));
      std::string said = srun_exit ? fmt::format(" (srun: {}{}{})", srun_exit->Describe(), held.empty() ? "" : ": ", held) : "";
      results.emplace_back(Error(srun_exit ? ErrorCode::kUnavailable : ErrorCode::kTimeout, hosts[i], *missing[i] + said));
      continue;
    }
    auto task = std::make_unique<StepTask>(step, i);
    if (!requests[i].stdin_data.empty()) (void)task->WriteStdin(requests[i].stdin_data);
    if (requests[i].close_stdin) task->CloseStdin();
    results.emplace_back(std::unique_ptr<RunningCommand>(std::move(task)));
  }
  return results;
}

}  // namespace topolaunch
