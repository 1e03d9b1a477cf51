#include "launch/agent.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "launch/agent_channel.h"
#include "launch/agent_connect.h"
#include "launch/connect_back.h"
#include "launch/launch_message.h"
#include "launch/local_executor.h"
#include "launch/preflight.h"
#include "launch/preflight_probe.h"
#include "launch/process_tree.h"
#include "launch/rank_output_socket.h"

namespace topolaunch {

namespace {

using std::chrono::milliseconds;

// After its preflight reply an agent waits this long at most for the
// launch message: a login node that vanished in between (a network cut
// closes nothing) must not leave agents waiting forever.
constexpr milliseconds kLaunchMessageWait{10 * 60 * 1000};
// How long each of `run`'s addresses gets to answer a connecting agent.
constexpr milliseconds kConnectEach{10'000};

// One line, read a byte at a time so that nothing after it is consumed
// (the rest of stdin is watched for EOF); nullopt at the end of input
// before a complete line, or when `limit` passes without any input.
std::optional<std::string> ReadLine(int fd, std::optional<milliseconds> limit = std::nullopt) {
  std::string text;
  char c;
  while (text.size() < (16u << 20)) {
    if (limit) {
      pollfd in{fd, POLLIN, 0};
      int ready = poll(&in, 1, static_cast<int>(limit->count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) break;
    }
    ssize_t got = read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (c == '\n') return text;
    text += c;
  }
  return std::nullopt;
}

Error NoLaunchMessage() {
  return Error(ErrorCode::kBadInput, "stdin", "no launch message (one line of JSON) before end of input");
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t put = write(fd, data.data(), data.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return;  // the reader is gone; the stop follows from stdin's EOF
    data.remove_prefix(static_cast<size_t>(put));
  }
}

// The agent is a subreaper: processes the job leaves behind (a daemon, a
// subshell's child) become its children when their parent ends. Each is
// reaped when it exits, so no zombie stays for the length of the job. The
// command itself is reaped by its executor: it is only looked at (WNOWAIT),
// and while it waits to be reaped, the others wait the next pass.
void ReapOrphans(pid_t command) {
  for (;;) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0 || info.si_pid == command) return;
    waitpid(info.si_pid, nullptr, WNOHANG);
  }
}

// The agent's stdout and stderr, written whole line by line from the
// executor's thread (torchrun's own lines) and the main loop (the ranks').
class AgentOutput {
 public:
  explicit AgentOutput(const AgentStreams& streams) : streams_(streams) {}
  void Line(OutputStream stream, std::string_view text) {
    std::string line = streams_.framed ? FormatOutputFrame(stream, text) : std::string(text) + '\n';
    std::lock_guard lock(mutex_);
    WriteAll(stream == OutputStream::kStdout ? streams_.out : streams_.err, line);
  }

 private:
  AgentStreams streams_;
  std::mutex mutex_;
};

// The ranks' own connections (rank_output_socket.h), when the message asks
// for them and they can be made; else the ranks share torchrun's output.
std::unique_ptr<RankOutputCollector> OpenRankOutput(const LaunchMessage& message, AgentOutput& output) {
  if (!message.rank_output) return nullptr;
  Result<std::unique_ptr<RankOutputCollector>> opened = RankOutputCollector::Open();
  if (opened.ok()) return std::move(opened).value();
  output.Line(OutputStream::kStderr, fmt::format("topolaunch agent: {}; the ranks' lines come unlabelled through torchrun",
                                                 opened.error().Message()));
  return nullptr;
}

int StatusOf(const ExitInfo& info) {
  if (info.signal.empty()) return info.exit_code < 0 ? 255 : info.exit_code;
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* name = sigabbrev_np(sig);
    if (name && info.signal == name) return 128 + sig;
  }
  return 255;
}

// The agent's conversation from its first line on.
Result<int> RunAgentSession(const AgentStreams& streams, std::optional<std::string> line) {
  if (!line) return NoLaunchMessage();
  if (IsPreflightRequest(*line)) {
    Result<PreflightRequest> preflight = ParsePreflightRequest(*line);
    if (!preflight.ok()) return preflight.take_error();
    std::string reply = FormatPreflightReply(GatherPreflight(*preflight));
    if (streams.framed) reply = FormatOutputFrame(OutputStream::kStdout, std::string_view(reply).substr(0, reply.size() - 1));
    WriteAll(streams.out, reply);
    line = ReadLine(streams.in, kLaunchMessageWait);
    if (!line) return 0;  // `run` decided not to start (another node failed its preflight), or is gone
  }
  Result<LaunchMessage> message = ParseLaunchMessage(*line);
  if (!message.ok()) return message.take_error();
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread starts: all inherit it
  int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);

  AgentOutput output(streams);
  std::unique_ptr<RankOutputCollector> ranks = OpenRankOutput(*message, output);
  RankLineSink rank_sink = [&output](RankLabel label, OutputStream stream, std::string_view text) {
    output.Line(stream, FormatRankLine(label, text));
  };
  LocalExecutor executor;
  LaunchRequest request{"", message->command, "", true};
  if (ranks) request.command.env.emplace_back(kRankOutputEnvName, ranks->path());
  std::vector<StartResult> started = executor.StartAll(
      {&request, 1}, [&output](size_t, OutputStream stream, std::string_view text) { output.Line(stream, text); });
  if (!started[0].ok()) {
    if (signal_fd >= 0) close(signal_fd);
    return started[0].take_error();
  }
  RunningCommand& command = **started[0];
  std::vector<pollfd> fds;
  std::optional<ExitInfo> ended;
  bool stop = false;
  char buf[4096];
  auto heard = std::chrono::steady_clock::now();
  while (!stop && !(ended = command.Wait(milliseconds(0)))) {
    fds = {{streams.in, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (ranks) ranks->AppendPollFds(fds);
    if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(streams.in, buf, sizeof buf);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) stop = true;  // EOF: channel gone
      if (got > 0) heard = std::chrono::steady_clock::now();
    }
    if (message->heartbeat.count() > 0 && std::chrono::steady_clock::now() - heard > 3 * message->heartbeat) {
      output.Line(OutputStream::kStderr,
                  fmt::format("topolaunch agent: no heartbeat from `run` for {} ms: the login node is cut off; stopping",
                              (3 * message->heartbeat).count()));
      stop = true;
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info;
      if (read(signal_fd, &info, sizeof info) == sizeof info) stop = true;
    }
    if (ranks) ranks->Service(std::span<const pollfd>(fds).subspan(2), rank_sink);
    ReapOrphans(command.ProcessId());
  }
  // Stopped, or ended with leftovers (daemons it started): nothing stays.
  StopProcessTree(getpid(), message->grace);
  if (!ended) ended = command.Wait(message->grace + milliseconds(3000));
  if (!ended) ended = command.Stop(milliseconds(0));
  ReapOrphans(-1);
  // Every rank is gone: what they wrote last is still in the sockets.
  if (ranks) ranks->Drain(milliseconds(2000), rank_sink);
  if (signal_fd >= 0) close(signal_fd);
  return StatusOf(*ended);
}

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::string ThisHost() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The first line was a connect-back line (connect_back.h): the conversation
// goes on over the connection to `run`, in frames, and ends with the exit
// frame; on error, the error's lines come first.
Result<int> RunConnectedAgent(std::string_view line) {
  std::optional<ConnectBack> where = ParseConnectBack(line);
  if (!where) return Error(ErrorCode::kBadInput, "stdin", "a connect-back line that is not well formed");
  signal(SIGPIPE, SIG_IGN);  // `run` may be gone: writes then fail instead of ending the agent
  int task = std::atoi(EnvOr("SLURM_PROCID", "0").c_str());
  where->addresses = AddressesToTry(*where, EnvOr("SLURM_LAUNCH_NODE_IPADDR", ""));
  Result<ConnectedRun> connected = ConnectToRun(*where, task, EnvOr("SLURMD_NODENAME", ThisHost()), kConnectEach);
  if (!connected.ok()) return connected.take_error();
  Result<std::unique_ptr<AgentChannel>> channel = AgentChannel::Start(connected->fd, connected->keys);
  if (!channel.ok()) return channel.take_error();
  int fd = (*channel)->fd();
  AgentStreams framed{fd, fd, fd, true};
  Result<int> status = RunAgentSession(framed, ReadLine(fd));
  int code = status.ok() ? *status : ExitStatusFor(status.error().code);
  if (!status.ok())
    for (const Problem& p : status.error().problems)
      WriteAll(fd, FormatOutputFrame(OutputStream::kStderr, fmt::format("topolaunch agent: error: {}{}{}", p.where,
                                                                         p.where.empty() ? "" : ": ", p.what)));
  WriteAll(fd, FormatExitFrame(code));
  (*channel)->Finish(std::chrono::seconds(10));
  return code;
}

}  // namespace

Result<int> RunAgent(const AgentStreams& streams) {
  std::optional<std::string> line = ReadLine(streams.in);
  if (line && !streams.framed && IsConnectBack(*line)) return RunConnectedAgent(*line);
  return RunAgentSession(streams, std::move(line));
}

}  // namespace topolaunch
