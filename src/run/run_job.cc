#include "run/run_job.h"

#include <chrono>
#include <thread>

#include "core/atomic_file.h"
#include "core/console.h"
#include "launch/restart_loop.h"
#include "run/stages.h"
#include "run/stop_signals.h"

namespace topolaunch::run {

namespace {

// One pass of the job: the stages in order, each handing the next its
// value, until one ends the pass.
PassResult RunPass(const RunOptions& options, const RunContext& context, const std::vector<std::string>& script_and_args,
                   const PassRequest& request) {
  Staged<PreparedJob> prepared = PrepareStage(options, context, script_and_args);
  if (Ended(prepared)) return TakeEnd(prepared);
  Staged<OrderedJob> ordered = OrderStage(options, TakeValue(prepared), request);
  if (Ended(ordered)) return TakeEnd(ordered);
  Staged<ConnectedJob> connected = ConnectStage(options, TakeValue(ordered));
  if (Ended(connected)) return TakeEnd(connected);
  Staged<PreflightedJob> preflighted = PreflightStage(options, TakeValue(connected), request);
  if (Ended(preflighted)) return TakeEnd(preflighted);
  PreflightedJob& job = std::get<PreflightedJob>(preflighted);
  Staged<Plan> plan = PlanStage(job, request);
  if (Ended(plan)) return TakeEnd(plan);
  Staged<SessionReport> report = LaunchStage(options, context, job, std::get<Plan>(plan));
  if (Ended(report)) return TakeEnd(report);
  return ReportStage(job, std::get<Plan>(plan), std::get<SessionReport>(report));
}

// Waits between attempts; false when a stop came meanwhile.
bool WaitUnlessStopped(std::chrono::milliseconds wait) {
  CatchStopSignals();  // Ctrl-C between attempts, too
  auto until = std::chrono::steady_clock::now() + wait;
  while (!StopRequested() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !StopRequested();
}

}  // namespace

int RunJob(const RunOptions& options, const RunContext& context, const std::vector<std::string>& script_and_args) {
  RestartOptions restarts{options.max_restarts, options.restart_delay_s, options.min_nnodes, options.failed_hosts};
  RestartIo io;
  io.note = [](std::string_view text) { Note(text); };
  io.print = [](std::string_view text) { PrintTo(stderr, text); };
  io.report_error = [](const Error& error) { return ReportError(error); };
  io.wait = WaitUnlessStopped;
  io.write_file = [](const std::string& path, std::string_view text) { return WriteFileAtomically(path, text); };
  return RunAttempts(
      restarts, [&](const PassRequest& request) { return RunPass(options, context, script_and_args, request); }, io);
}

}  // namespace topolaunch::run
