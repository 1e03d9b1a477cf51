#include "launch/srun_executor.h"

namespace topolaunch {

Command SrunStepCommand(const std::string& srun, const std::string& host, const Command& inner) {
  Command step;
  step.argv = {srun,         "--nodes=1", "--ntasks=1",    "--ntasks-per-node=1", "--nodelist=" + host, "--overlap",
               "--kill-on-bad-exit=1",  "--unbuffered", "--quiet"};
  if (!inner.cwd.empty()) step.argv.push_back("--chdir=" + inner.cwd);
  step.argv.push_back("--");
  step.argv.insert(step.argv.end(), inner.argv.begin(), inner.argv.end());
  step.env = inner.env;
  return step;
}

namespace {

class SrunStep : public RunningCommand {
 public:
  explicit SrunStep(std::unique_ptr<RunningCommand> srun) : srun_(std::move(srun)) {}
  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout) override { return srun_->Wait(timeout); }
  ExitInfo Stop(std::chrono::milliseconds grace) override {
    srun_->CloseStdin();  // the agent's "stop": SIGTERM to its workers, SIGKILL after their grace
    if (std::optional<ExitInfo> ended = srun_->Wait(grace)) return *ended;
    return srun_->Stop(SrunExecutor::kCancelGrace);
  }
  Status WriteStdin(std::string_view data) override { return srun_->WriteStdin(data); }
  void CloseStdin() override { srun_->CloseStdin(); }
  int ProcessId() const override { return srun_->ProcessId(); }

 private:
  std::unique_ptr<RunningCommand> srun_;
};

}  // namespace

std::vector<StartResult> SrunExecutor::StartAll(std::span<const LaunchRequest> requests, OutputSink sink) {
  std::vector<LaunchRequest> steps(requests.begin(), requests.end());
  for (LaunchRequest& step : steps) step.command = SrunStepCommand(srun_, step.host, step.command);
  std::vector<StartResult> started = base_->StartAll(steps, std::move(sink));
  for (StartResult& result : started)
    if (result.ok()) result = std::unique_ptr<RunningCommand>(std::make_unique<SrunStep>(std::move(result).value()));
  return started;
}

}  // namespace topolaunch
