// launch benchmark (`run`): prints figures, asserts nothing.
//
// Time from start to all remote agents started, 64 SSH sessions against one
// sshd on loopback (MaxStartups raised to 200), side by side with
// `pdsh -R ssh -f 64 -w h[1-64] true` in the same run, alternating (each
// run starts at the next figure, so slow load drifts spread over all):
//   preflight     RunSession::Preflight over SshExecutor: every agent
//                 started and its preflight reply received (what `run`
//                 asks: sh, python3, numactl, a free master port; no
//                 layout), then Abort() (timed apart);
//   +layout       the same with want_layout (hwloc on every agent);
//   run --dry-run the whole CLI, `topolaunch run --hosts h[1-64]
//                 --nproc-per-node 1 --no-gpus --dry-run ...`, with HOME
//                 holding .ssh/{config,known_hosts,id_ed25519}: its own SSH
//                 settings (8 connections set up at a time), preflight with
//                 layout, plan, env, dry-run print, abort;
//   exec true     SshExecutor starting agents that run `true` and exit;
//   pdsh          the peer.
// Every side uses the same key, known_hosts and ssh config (h1..h64 all name
// 127.0.0.1). Needs root (the sessions log in as root), sshd, pdsh, numactl.
//
// Usage: launch_bench [RUNS]   (default 5)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "bench_stats.h"

#include "launch/launch_message.h"
#include "launch/run_session.h"
#include "launch/ssh_executor.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

using namespace topolaunch;
using namespace topolaunch::testing;
using Clock = std::chrono::steady_clock;

using topolaunch::bench::Median;

namespace {

constexpr int kSessions = 64;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len);
  close(fd);
  return ntohs(address.sin_port);
}

ProcessSpec Spec(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

bool Run(std::vector<std::string> argv) {
  ProcessResult r = RunProcess(Spec(std::move(argv)));
  if (r.exit_code != 0) fmt::print(stderr, "{}\n", r.Describe());
  return r.exit_code == 0;
}

std::vector<SessionNode> Nodes() {
  std::vector<SessionNode> nodes;
  for (int i = 1; i <= kSessions; ++i) nodes.push_back({fmt::format("h{}", i), i - 1});
  return nodes;
}

// Agents print nothing besides their reply unless something is wrong.
class StderrPrinter : public LinePrinter {
 public:
  void Line(const NodeLine& line) override { fmt::print(stderr, "h{}: {}\n", line.node + 1, line.text); }
};

// Seconds of Preflight (every agent started and answering) and of Abort.
std::pair<double, double> TimePreflight(const SshOptions& ssh, bool want_layout) {
  SessionOptions options;
  options.agent = Command{{TopolaunchBinary(), "agent"}};
  // As `run` asks: its --torchrun and --python, numactl, the master port
  // free on every node, the route toward the first node.
  options.preflight = {{"sh", "python3", "numactl"}, FreeLoopbackPort(), "h1", want_layout, "", {}, ""};
  options.now_ms = NowUnixMs;
  StderrPrinter printer;
  std::atomic<bool> stop{false};
  Clock::time_point start = Clock::now();
  SshExecutor executor(ssh);
  RunSession session(executor, Nodes(), options, printer);
  std::vector<NodePreflight> replies = session.Preflight(stop);
  double t_preflight = SecondsSince(start);
  start = Clock::now();
  session.Abort();
  double t_abort = SecondsSince(start);
  int answered = 0, failed = 0;
  for (const NodePreflight& node : replies) {
    if (node.reply && node.failure.empty() && (!want_layout || node.reply->layout)) {
      ++answered;
    } else if (++failed <= 3) {  // the first few, not 64 lines of the same
      fmt::print(stderr, "preflight: {}\n", node.failure.empty() ? node.reply->layout_problem : node.failure);
    }
  }
  if (answered != kSessions) fmt::print(stderr, "preflight: only {} of {} agents answered\n", answered, kSessions);
  return {t_preflight, t_abort};
}

// Seconds until every agent ran `true` and exited.
double TimeExecTrue(const SshOptions& options) {
  std::vector<LaunchRequest> requests;
  for (const SessionNode& node : Nodes()) {
    LaunchRequest request{node.host, {{TopolaunchBinary(), "agent"}}};
    request.stdin_data = FormatLaunchMessage({{{"true"}}, std::chrono::milliseconds(1000)});
    request.close_stdin = false;  // the agent reads EOF as "stop"
    requests.push_back(request);
  }
  int ran = 0;
  Clock::time_point start = Clock::now();
  SshExecutor executor(options);
  std::vector<StartResult> started =
      executor.StartAll(requests, [](size_t i, OutputStream, std::string_view line) { fmt::print(stderr, "h{}: {}\n", i + 1, line); });
  for (StartResult& s : started) {
    if (!s.ok()) {
      fmt::print(stderr, "{}\n", s.error().Message());
      continue;
    }
    std::optional<ExitInfo> info = (*s)->Wait(std::chrono::seconds(60));
    ran += info && info->exit_code == 0;
    if (!info || info->exit_code != 0) fmt::print(stderr, "agent: {}\n", info ? info->Describe() : "still running");
  }
  double seconds = SecondsSince(start);
  if (ran != kSessions) fmt::print(stderr, "exec true: only {} of {} agents ran\n", ran, kSessions);
  return seconds;
}

double TimeProcess(const std::string& name, const ProcessSpec& spec) {
  ProcessResult r = RunProcess(spec);
  if (r.exit_code != 0) fmt::print(stderr, "{}: {}\n", name, r.Describe());
  return r.seconds;
}

// The client side of the loopback world: HOME/.ssh as `run` and ssh read it.
struct SshHome {
  std::string home;
  std::string ssh_config;
  SshOptions options;
};

// Keys, known_hosts, client config and a running sshd on a free port.
Result<std::unique_ptr<BackgroundProcess>> StartSshd(const TempDir& dir, SshHome& client) {
  int port = FreeLoopbackPort();
  client.home = dir.File("home");
  std::string dot_ssh = client.home + "/.ssh";
  std::filesystem::create_directories(dot_ssh);
  if (!Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.File("host")}) ||
      !Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dot_ssh + "/id_ed25519"}))
    return Error(ErrorCode::kUnavailable, "ssh-keygen", "failed");
  std::ofstream(dir.File("authorized_keys")) << ReadFile(dot_ssh + "/id_ed25519.pub");
  std::string host_pub = ReadFile(dir.File("host.pub"));
  std::ofstream(dot_ssh + "/known_hosts") << fmt::format("[127.0.0.1]:{} {}\n", port, host_pub.substr(0, host_pub.rfind(' ')));
  client.ssh_config = fmt::format("Host h*\n  HostName 127.0.0.1\n  Port {}\n  User root\n", port);
  std::ofstream(dot_ssh + "/config") << client.ssh_config;
  std::ofstream(dir.File("sshd_config")) << fmt::format(
      "HostKey {0}/host\nAuthorizedKeysFile {0}/authorized_keys\nPermitRootLogin prohibit-password\nStrictModes no\n"
      "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\nPidFile none\n"
      "MaxStartups 200\nMaxSessions 200\nListenAddress 127.0.0.1\nPort {1}\n",
      dir.path(), port);
  std::filesystem::create_directories("/run/sshd");
  auto sshd = BackgroundProcess::Start(Spec({"/usr/sbin/sshd", "-D", "-e", "-f", dir.File("sshd_config")}), dir.File("sshd.log"));
  if (!sshd.ok()) return sshd;
  if (Status up = (*sshd)->WaitForLog("Server listening", std::chrono::seconds(10)); !up.ok()) return up.take_error();
  client.options.local_user = "root";
  client.options.home = client.home;
  client.options.config = ParseSshConfig(client.ssh_config, "config").value();
  client.options.identity_files = {dot_ssh + "/id_ed25519"};
  client.options.known_hosts_file = dot_ssh + "/known_hosts";
  client.options.max_parallel_connects = kSessions;  // sshd's MaxStartups is 200 here
  client.options.max_connects_per_host = kSessions;
  return sshd;
}

ProcessSpec RunDryRunSpec(const SshHome& client, const std::string& cwd) {
  ProcessSpec spec = Spec({TopolaunchBinary(), "run", "--hosts", fmt::format("h[1-{}]", kSessions), "--nproc-per-node", "1",
                           "--no-gpus", "--dry-run", "--torchrun", "sh", "--python", "sh", "x.py"});
  spec.env = {{"HOME", client.home}, {"SSH_AUTH_SOCK", ""}};
  spec.cwd = cwd;
  spec.timeout = std::chrono::seconds(180);
  return spec;
}

ProcessSpec PdshSpec(const SshHome& client) {
  ProcessSpec spec = Spec({"pdsh", "-R", "ssh", "-f", "64", "-w", fmt::format("h[1-{}]", kSessions), "true"});
  spec.env = {{"HOME", client.home},
              {"PDSH_SSH_ARGS", fmt::format("-F {0}/.ssh/config -o BatchMode=yes -o UserKnownHostsFile={0}/.ssh/known_hosts "
                                            "-i {0}/.ssh/id_ed25519 -l%u %h", client.home)}};
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  if (geteuid() != 0 || access("/usr/sbin/sshd", X_OK) != 0 || access("/usr/bin/pdsh", X_OK) != 0) {
    fmt::print("launch_bench: needs root, sshd and pdsh (tests/install_deps.sh test); skipped\n");
    return 0;
  }
  TempDir dir;
  SshHome client;
  Result<std::unique_ptr<BackgroundProcess>> sshd = StartSshd(dir, client);
  if (!sshd.ok()) {
    fmt::print(stderr, "sshd did not start: {}\n{}\n", sshd.error().Message(), ReadFile(dir.File("sshd.log")));
    return 1;
  }
  ProcessSpec dry_run = RunDryRunSpec(client, dir.path());
  ProcessSpec pdsh = PdshSpec(client);
  std::map<std::string, std::vector<double>> seconds;
  std::vector<std::pair<std::string, std::function<void()>>> figures = {
      {"preflight", [&] {
         auto [t, abort] = TimePreflight(client.options, false);
         seconds["preflight"].push_back(t);
         seconds["abort"].push_back(abort);
       }},
      {"preflight+layout", [&] {
         auto [t, abort] = TimePreflight(client.options, true);
         seconds["preflight+layout"].push_back(t);
         seconds["abort+layout"].push_back(abort);
       }},
      {"run --dry-run", [&] { seconds["run --dry-run"].push_back(TimeProcess("run --dry-run", dry_run)); }},
      {"exec true", [&] { seconds["exec true"].push_back(TimeExecTrue(client.options)); }},
      {"pdsh", [&] { seconds["pdsh"].push_back(TimeProcess("pdsh", pdsh)); }},
  };
  for (int run = 0; run < runs; ++run) {
    std::string line = fmt::format("run {}:", run + 1);
    for (size_t k = 0; k < figures.size(); ++k) {
      auto& [name, measure] = figures[(run + k) % figures.size()];
      measure();
      line += fmt::format(" {} {:.2f} s;", name, seconds[name].back());
    }
    fmt::print("{}\n", line);
    std::fflush(stdout);
  }
  double pdsh_median = Median(seconds["pdsh"]);
  fmt::print("median of {} runs, {} sessions, pdsh -R ssh -f 64 true: {:.2f} s\n", runs, kSessions, pdsh_median);
  auto row = [&](std::string_view what, const std::string& key, std::string_view extra) {
    double t = Median(seconds[key]);
    fmt::print("  {:<58} {:6.2f} s  ratio to pdsh {:.2f}{}\n", what, t, t / pdsh_median, extra);
  };
  row("RunSession::Preflight, no layout (agents answering)", "preflight",
      fmt::format("  (then Abort {:.2f} s)", Median(seconds["abort"])));
  row("RunSession::Preflight, hwloc layout on every agent", "preflight+layout",
      fmt::format("  (then Abort {:.2f} s)", Median(seconds["abort+layout"])));
  row("topolaunch run --dry-run (whole CLI, 8 connects at a time)", "run --dry-run", "");
  row("SshExecutor: every agent ran `true` and exited 0", "exec true", "");
  return 0;
}
