#include "launch/run_session.h"

#include <regex>
#include <thread>

#include <fmt/format.h>

namespace topolaunch {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr milliseconds kPoll{20};
constexpr milliseconds kProgressEvery{1000};

bool EndedBadly(const ExitInfo& exit) { return exit.connection_lost || !exit.signal.empty() || exit.exit_code != 0; }

// torchrun's "failed (exitcode: N) local_rank: L (pid: P) of binary: ..."
// line. torch 1.13's torchrun then waits up to 300 s in its exit barrier
// for the other nodes (torch 2 returns at once), so this line, not its
// exit, is when the node has failed. Only the whole line as torchrun's
// logger writes it on stderr counts (torch 1.13: "ERROR:torch.distributed.
// elastic.multiprocessing.api:failed ...", torch 2: "E1201 12:00:00.123000
// 4242 .../torch/distributed/elastic/multiprocessing/api.py:869] failed
// ..."): a script that prints the words does not stop the job.
std::optional<std::string> FailedWorker(OutputStream stream, std::string_view line) {
  static const std::regex kTorchrunFailed(
      R"(^(?:ERROR:torch\.distributed\.elastic\.multiprocessing\.api:|\[?E\d{4} [\d:.]+ +\d+ \S*torch/distributed/elastic/multiprocessing/api\.py:\d+\] )failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: \d+\))");
  if (stream != OutputStream::kStderr || line.size() > 4096 || line.find("failed (exitcode: ") == std::string_view::npos)
    return std::nullopt;
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(line.begin(), line.end(), match, kTorchrunFailed)) return std::nullopt;
  return fmt::format("worker failed: local rank {} exit code {} (torchrun)", match[2].str(), match[1].str());
}

// The report keeps a node's last lines; each is kept to this many bytes.
constexpr size_t kTailLineBytes = 4096;

}  // namespace

struct RunSession::NodeState {
  std::unique_ptr<RunningCommand> command;
  bool replied = false;
  NodePreflight preflight;
  NodeOutcome outcome;
};

RunSession::RunSession(Executor& executor, std::vector<SessionNode> nodes, SessionOptions options, LinePrinter& printer)
    : executor_(executor), nodes_(std::move(nodes)), options_(std::move(options)), printer_(printer) {
  for (size_t i = 0; i < nodes_.size(); ++i) state_.push_back(std::make_unique<NodeState>());
}

// The commands go first, while every node's state is whole: a command's
// last lines reach OnLine as it ends (the srun executor's step outlives
// all but its last node's command, and srun's "task 1: Killed" comes as
// the step is stopped), and OnLine writes them into a node's state. Taken
// out under the lock, ended outside it (their lines take the lock).
RunSession::~RunSession() {
  std::vector<std::unique_ptr<RunningCommand>> commands;
  {
    std::lock_guard lock(mutex_);
    for (std::unique_ptr<NodeState>& state : state_) commands.push_back(std::move(state->command));
  }
  commands.clear();
}

void RunSession::OnLine(size_t node, OutputStream stream, std::string_view text) {
  std::lock_guard lock(mutex_);
  NodeState& state = *state_[node];
  if (!state.replied && stream == OutputStream::kStdout && IsPreflightReply(text)) {
    state.replied = true;
    Result<PreflightReply> reply = ParsePreflightReply(text);
    if (reply.ok()) {
      state.preflight.reply = std::move(reply).value();
      state.preflight.received_ms = options_.now_ms();
    } else {
      state.preflight.failure = "bad preflight reply: " + reply.error().Message();
    }
    return;
  }
  RankLine line = ParseRankLine(text);
  bool own = line.label.rank < 0;
  if (own && state.outcome.failure.empty())
    if (std::optional<std::string> failed = FailedWorker(stream, line.text)) state.outcome.failure = std::move(*failed);
  std::string_view kept = line.text.substr(0, kTailLineBytes);
  state.outcome.tail.push_back(own ? std::string(kept) : fmt::format("{}: {}", line.label.rank, kept));
  if (state.outcome.tail.size() > options_.tail_lines) state.outcome.tail.pop_front();
  printer_.Line({node, stream, line.label, line.text});
}

std::vector<NodePreflight> RunSession::Preflight(const std::atomic<bool>& stop) {
  std::vector<LaunchRequest> requests;
  for (const SessionNode& node : nodes_)
    requests.push_back(LaunchRequest{node.host, options_.agent, FormatPreflightRequest(options_.preflight), false});
  int64_t sent_ms = options_.now_ms();
  for (const std::unique_ptr<NodeState>& state : state_) state->preflight.sent_ms = sent_ms;
  std::vector<StartResult> started = executor_.StartAll(
      requests, [this](size_t node, OutputStream stream, std::string_view text) { OnLine(node, stream, text); });
  for (size_t i = 0; i < started.size(); ++i) {
    std::lock_guard lock(mutex_);
    if (started[i].ok()) {
      state_[i]->command = std::move(started[i]).value();
    } else {
      state_[i]->replied = true;
      state_[i]->preflight.failure = started[i].error().Message();
    }
  }
  SteadyClock::time_point begun = SteadyClock::now();
  SteadyClock::time_point deadline = begun + options_.preflight_timeout;
  SteadyClock::time_point next_progress = begun + kProgressEvery;
  for (;;) {
    std::vector<size_t> waiting;
    for (size_t i = 0; i < state_.size(); ++i) {
      NodeState* state = state_[i].get();
      {
        std::lock_guard lock(mutex_);
        if (state->replied) continue;
      }
      // Not under the lock: an ending command may flush its last lines
      // through OnLine from inside Wait.
      std::optional<ExitInfo> exit = state->command->Wait(milliseconds(0));
      std::lock_guard lock(mutex_);
      if (state->replied) continue;
      if (exit) {
        state->replied = true;
        state->outcome.exit = exit;
        std::string last = state->outcome.tail.empty() ? "" : ": " + state->outcome.tail.back();
        state->preflight.failure = fmt::format("the agent ended before its preflight reply ({}){}", exit->Describe(), last);
        continue;
      }
      waiting.push_back(i);
    }
    if (waiting.empty() || stop) break;
    if (options_.preflight_progress && SteadyClock::now() >= next_progress) {
      next_progress += kProgressEvery;
      options_.preflight_progress(waiting, std::chrono::duration_cast<milliseconds>(SteadyClock::now() - begun));
    }
    if (SteadyClock::now() >= deadline) {
      std::lock_guard lock(mutex_);
      for (std::unique_ptr<NodeState>& state : state_)
        if (!state->replied) {
          state->replied = true;
          state->preflight.failure =
              fmt::format("no preflight reply within {} s", std::chrono::duration_cast<std::chrono::seconds>(options_.preflight_timeout).count());
        }
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<NodePreflight> result;
  std::lock_guard lock(mutex_);
  for (const std::unique_ptr<NodeState>& state : state_) result.push_back(state->preflight);
  return result;
}

void RunSession::Abort() {
  for (std::unique_ptr<NodeState>& state : state_)
    if (state->command) state->command->CloseStdin();
  std::vector<std::thread> waiters;
  for (std::unique_ptr<NodeState>& state : state_) {
    if (!state->command) continue;
    waiters.emplace_back([this, &state] {
      std::optional<ExitInfo> exit = state->command->Wait(options_.stop_grace);
      if (!exit) exit = state->command->Stop(milliseconds(0));
      std::lock_guard lock(mutex_);
      state->outcome.exit = exit;
    });
  }
  for (std::thread& waiter : waiters) waiter.join();
}

void RunSession::StopAll(const std::vector<size_t>& which, std::optional<size_t> failed) {
  std::vector<std::thread> stoppers;
  for (size_t i : which) {
    stoppers.emplace_back([this, i, failed] {
      RunningCommand& command = *state_[i]->command;
      std::optional<ExitInfo> ended = failed == i ? Settle(command) : std::nullopt;
      ExitInfo exit = ended ? *ended : command.Stop(options_.stop_grace);
      std::lock_guard lock(mutex_);
      state_[i]->outcome.exit = exit;
      // The failed node is stopped too (torchrun may wait for the others),
      // but what it reports is its own failure.
      state_[i]->outcome.stopped = failed != i;
    });
  }
  for (std::thread& stopper : stoppers) stopper.join();
}

// The node whose torchrun reported a failed worker is still running:
// torchrun is about to print the root cause and the rank's last lines (its
// --tee tails lag behind). It gets `failed_node_settle` to end by itself,
// its heartbeats going on; torch 1.13's then waits for the others in its
// exit barrier, and is stopped after it.
std::optional<ExitInfo> RunSession::Settle(RunningCommand& command) {
  SteadyClock::time_point until = SteadyClock::now() + options_.failed_node_settle;
  milliseconds step = options_.heartbeat.count() > 0 ? std::min(options_.heartbeat, milliseconds(500)) : milliseconds(500);
  while (SteadyClock::now() < until) {
    auto left = std::chrono::duration_cast<milliseconds>(until - SteadyClock::now());
    if (std::optional<ExitInfo> exit = command.Wait(std::min(step, left))) return exit;
    if (options_.heartbeat.count() > 0) (void)command.WriteStdin("\n");
  }
  return std::nullopt;
}

SessionReport RunSession::Launch(const std::vector<LaunchMessage>& messages, const std::atomic<bool>& stop) {
  SteadyClock::time_point start = SteadyClock::now();
  auto since_start = [start] { return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start); };
  SessionReport report;
  for (size_t i = 0; i < state_.size(); ++i) {
    NodeState& state = *state_[i];
    if (!state.command) continue;
    Status sent = state.command->WriteStdin(FormatLaunchMessage(messages.at(i)));
    if (!sent.ok() && !report.first_failure) report.first_failure = i;
  }
  bool stopping = false;
  SteadyClock::time_point last_beat = SteadyClock::now();
  for (;;) {
    if (options_.heartbeat.count() > 0 && !stopping && SteadyClock::now() - last_beat >= options_.heartbeat) {
      last_beat = SteadyClock::now();
      for (std::unique_ptr<NodeState>& state : state_)
        if (state->command) (void)state->command->WriteStdin("\n");  // refused once it ended: nothing to keep alive
    }
    std::vector<size_t> running;
    for (size_t i = 0; i < state_.size(); ++i) {
      NodeState& state = *state_[i];
      if (!state.command) continue;
      {
        std::lock_guard lock(mutex_);
        if (state.outcome.exit) continue;
      }
      std::optional<ExitInfo> exit = state.command->Wait(milliseconds(0));
      if (!exit) {
        running.push_back(i);
        std::lock_guard lock(mutex_);
        if (!state.outcome.failure.empty() && !stopping && !report.first_failure) report.first_failure = i;
        continue;
      }
      std::lock_guard lock(mutex_);
      state.outcome.exit = exit;
      state.outcome.ended_after = since_start();
      if (EndedBadly(*exit) && !stopping && !report.first_failure) report.first_failure = i;
    }
    if (running.empty()) break;
    if (!stopping && (report.first_failure || stop)) {
      stopping = true;
      report.interrupted = !report.first_failure;
      StopAll(running, report.first_failure);
      for (size_t i : running) state_[i]->outcome.ended_after = since_start();
      continue;
    }
    std::this_thread::sleep_for(kPoll);
  }
  report.wall = since_start();
  std::lock_guard lock(mutex_);
  for (const std::unique_ptr<NodeState>& state : state_) report.nodes.push_back(state->outcome);
  return report;
}

}  // namespace topolaunch
