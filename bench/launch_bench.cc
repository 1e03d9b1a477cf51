// launch benchmark (`run`): prints figures, asserts nothing.
//
// Time from start to all remote agents started, N SSH sessions (64 and 256
// by default) to N hosts, each an sshd of its own on loopback (see
// StartSshds), side by side with `pdsh -R ssh -f N -w h[1-N] true` in the
// same run, alternating (each run starts at the next figure, so slow load
// drifts spread over all):
//   preflight     RunSession::Preflight over SshExecutor with `run`'s
//                 settings (64 set-ups at a time): every agent
//                 started and its preflight reply received (what `run`
//                 asks: sh, python3, numactl, a free master port; no
//                 layout), then Abort() (timed apart);
//   +layout       the same with want_layout (hwloc on every agent);
//   run --dry-run the whole CLI, `topolaunch run --hosts h[1-N]
//                 --nproc-per-node 1 --no-gpus --dry-run ... x.py`, with
//                 HOME holding .ssh/{config,known_hosts,id_ed25519}: its own
//                 SSH settings (64 connections set up at a time), preflight
//                 with layout, plan, env, dry-run print, abort;
//   exec true     SshExecutor starting agents that run `true` and exit;
//   pdsh          the peer.
// Every figure is of a run that succeeded (every agent answered, exit 0);
// a failed one is counted and left out of the medians. Beside each time:
// the CPU the launching side spent per session (this process's own for the
// in-process rows, the child's and what it waited for otherwise), which is
// what a login node pays; sshd's side runs on the same machine and is not
// counted. Every side uses the same key, known_hosts and ssh config (h1..hN
// all name 127.0.0.1). sshd runs in a mount namespace of its own where
// root's ~/.bashrc reads as empty: Debian's bash runs it for every command
// sshd starts, and a developer's (pyenv init) costs more than the launch.
// Needs root (the sessions log in as root), sshd, pdsh, numactl, unshare.
//
// Usage: launch_bench [RUNS [SESSIONS...]]   (default 3 runs, 64 and 256)
#include <netinet/in.h>
#include <sys/resource.h>
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

// What one figure of one run measured.
struct Sample {
  double wall = 0;
  double cpu = 0;  ///< the launching side's, user + system
  bool ok = false;
};

double CpuOfThisProcess() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `n` distinct free ports: each probe stays bound until all are chosen.
std::vector<int> FreeLoopbackPorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof address;
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len);
    fds.push_back(fd);
    ports.push_back(ntohs(address.sin_port));
  }
  for (int fd : fds) close(fd);
  return ports;
}

int FreeLoopbackPort() { return FreeLoopbackPorts(1).front(); }

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

std::vector<SessionNode> Nodes(int sessions) {
  std::vector<SessionNode> nodes;
  for (int i = 1; i <= sessions; ++i) nodes.push_back({fmt::format("h{}", i), i - 1});
  return nodes;
}

// Agents print nothing besides their reply unless something is wrong.
class StderrPrinter : public LinePrinter {
 public:
  void Line(const NodeLine& line) override { fmt::print(stderr, "h{}: {}\n", line.node + 1, line.text); }
};

// Preflight (every agent started and answering), and then Abort.
std::pair<Sample, Sample> TimePreflight(const SshOptions& ssh, int sessions, bool want_layout) {
  SessionOptions options;
  options.agent = Command{{TopolaunchBinary(), "agent"}};
  // As `run` asks: its --torchrun and --python, numactl, the master port
  // free on every node, the route toward the first node.
  options.preflight.programs = {"sh", "python3", "numactl"};
  options.preflight.master_port = FreeLoopbackPort();
  options.preflight.master_addr = "h1";
  options.preflight.want_layout = want_layout;
  options.now_ms = NowUnixMs;
  StderrPrinter printer;
  std::atomic<bool> stop{false};
  Sample preflight, abort;
  double cpu = CpuOfThisProcess();
  Clock::time_point start = Clock::now();
  SshExecutor executor(ssh);
  RunSession session(executor, Nodes(sessions), options, printer);
  std::vector<NodePreflight> replies = session.Preflight(stop);
  preflight.wall = SecondsSince(start);
  preflight.cpu = CpuOfThisProcess() - cpu;
  cpu = CpuOfThisProcess();
  start = Clock::now();
  session.Abort();
  abort.wall = SecondsSince(start);
  abort.cpu = CpuOfThisProcess() - cpu;
  int answered = 0, failed = 0;
  for (const NodePreflight& node : replies) {
    if (node.reply && node.failure.empty() && (!want_layout || node.reply->layout)) {
      ++answered;
    } else if (++failed <= 3) {  // the first few, not 64 lines of the same
      fmt::print(stderr, "preflight: {}\n", node.failure.empty() ? node.reply->layout_problem : node.failure);
    }
  }
  if (answered != sessions) fmt::print(stderr, "preflight: only {} of {} agents answered\n", answered, sessions);
  preflight.ok = abort.ok = answered == sessions;
  return {preflight, abort};
}

// Until every agent ran `true` and exited.
Sample TimeExecTrue(const SshOptions& options, int sessions) {
  std::vector<LaunchRequest> requests;
  for (const SessionNode& node : Nodes(sessions)) {
    LaunchRequest request{node.host, {{TopolaunchBinary(), "agent"}}};
    request.stdin_data = FormatLaunchMessage({{{"true"}}, std::chrono::milliseconds(1000)});
    request.close_stdin = false;  // the agent reads EOF as "stop"
    requests.push_back(request);
  }
  int ran = 0;
  double cpu = CpuOfThisProcess();
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
  Sample sample{SecondsSince(start), CpuOfThisProcess() - cpu, ran == sessions};
  if (ran != sessions) fmt::print(stderr, "exec true: only {} of {} agents ran\n", ran, sessions);
  return sample;
}

Sample TimeProcess(const std::string& name, const ProcessSpec& spec) {
  ProcessResult r = RunProcess(spec);
  if (r.exit_code != 0) fmt::print(stderr, "{}: {}\n", name, r.Describe());
  return {r.seconds, r.cpu_seconds, r.exit_code == 0};
}

// The client side of the loopback world: HOME/.ssh as `run` and ssh read it.
struct SshHome {
  std::string home;
  std::string ssh_config;
  SshOptions options;
};

// Keys, known_hosts, client config and `nodes` sshds, each on a free port
// of loopback under a host name of its own (a UTS namespace: `run` refuses
// two names for one machine, which it tells by host name and boot id), so
// every host has its own sshd, as on a cluster.
Result<std::vector<std::unique_ptr<BackgroundProcess>>> StartSshds(const TempDir& dir, SshHome& client, int nodes) {
  client.home = dir.File("home");
  std::string dot_ssh = client.home + "/.ssh";
  std::filesystem::create_directories(dot_ssh);
  if (!Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.File("host")}) ||
      !Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dot_ssh + "/id_ed25519"}))
    return Error(ErrorCode::kUnavailable, "ssh-keygen", "failed");
  std::ofstream(dir.File("authorized_keys")) << ReadFile(dot_ssh + "/id_ed25519.pub");
  std::string host_pub = ReadFile(dir.File("host.pub"));
  host_pub = host_pub.substr(0, host_pub.rfind(' '));
  std::ofstream(dir.File("sshd_config")) << fmt::format(
      "HostKey {0}/host\nAuthorizedKeysFile {0}/authorized_keys\nPermitRootLogin prohibit-password\nStrictModes no\n"
      "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\nPidFile none\n"
      "MaxSessions 1024\n",
      dir.path());
  std::filesystem::create_directories("/run/sshd");
  std::string known_hosts;
  std::vector<std::unique_ptr<BackgroundProcess>> sshds;
  std::vector<int> ports = FreeLoopbackPorts(nodes);
  for (int i = 1; i <= nodes; ++i) {
    int port = ports[i - 1];
    known_hosts += fmt::format("[127.0.0.1]:{} {}\n", port, host_pub);
    client.ssh_config += fmt::format("Host h{}\n  HostName 127.0.0.1\n  Port {}\n  User root\n", i, port);
    // See the file comment: the sessions must not run root's ~/.bashrc.
    auto sshd = BackgroundProcess::Start(
        Spec({"unshare", "--uts", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
              "hostname \"$0\" && { [ ! -f ~root/.bashrc ] || mount --bind /dev/null ~root/.bashrc; } && exec \"$@\"",
              fmt::format("h{}", i), "/usr/sbin/sshd", "-D", "-e", "-f", dir.File("sshd_config"), "-o",
              fmt::format("ListenAddress=127.0.0.1:{}", port)}),
        dir.File(fmt::format("sshd{}.log", i)));
    if (!sshd.ok()) return sshd.take_error();
    sshds.push_back(std::move(sshd).value());
  }
  for (int i = 0; i < nodes; ++i)
    if (Status up = sshds[i]->WaitForLog("Server listening", std::chrono::seconds(20)); !up.ok())
      return Error(ErrorCode::kUnavailable, fmt::format("sshd of h{}", i + 1),
                   up.error().Message() + "\n" + ReadFile(dir.File(fmt::format("sshd{}.log", i + 1))));
  std::ofstream(dot_ssh + "/known_hosts") << known_hosts;
  std::ofstream(dot_ssh + "/config") << client.ssh_config;
  client.options.local_user = "root";
  client.options.home = client.home;
  client.options.config = ParseSshConfig(client.ssh_config, "config").value();
  client.options.identity_files = {dot_ssh + "/id_ed25519"};
  client.options.known_hosts_file = dot_ssh + "/known_hosts";
  return sshds;
}

// `run` checks on every node that the script is there: x.py is in `cwd`.
ProcessSpec RunDryRunSpec(const SshHome& client, const std::string& cwd, int sessions) {
  ProcessSpec spec = Spec({TopolaunchBinary(), "run", "--hosts", fmt::format("h[1-{}]", sessions), "--nproc-per-node", "1",
                           "--no-gpus", "--dry-run", "--torchrun", "sh", "--python", "sh", "x.py"});
  spec.env = {{"HOME", client.home}, {"SSH_AUTH_SOCK", ""}};
  spec.cwd = cwd;
  spec.timeout = std::chrono::seconds(180);
  return spec;
}

ProcessSpec PdshSpec(const SshHome& client, int sessions) {
  ProcessSpec spec = Spec({"pdsh", "-R", "ssh", "-f", std::to_string(sessions), "-w", fmt::format("h[1-{}]", sessions), "true"});
  spec.env = {{"HOME", client.home},
              {"PDSH_SSH_ARGS", fmt::format("-F {0}/.ssh/config -o BatchMode=yes -o UserKnownHostsFile={0}/.ssh/known_hosts "
                                            "-i {0}/.ssh/id_ed25519 -l%u %h", client.home)}};
  return spec;
}

// Medians of the runs that succeeded.
struct Row {
  double wall = 0;
  double cpu = 0;
  int failed = 0;
};

Row Summarize(const std::vector<Sample>& samples) {
  std::vector<double> wall, cpu;
  Row row;
  for (const Sample& s : samples) {
    if (!s.ok) {
      ++row.failed;
      continue;
    }
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
  }
  if (!wall.empty()) row.wall = Median(wall), row.cpu = Median(cpu);
  return row;
}

// Every figure at `sessions`, `runs` times; returns the rows by name.
std::map<std::string, Row> Measure(const SshHome& client, const std::string& dir, int sessions, int runs) {
  ProcessSpec dry_run = RunDryRunSpec(client, dir, sessions);
  ProcessSpec pdsh = PdshSpec(client, sessions);
  std::map<std::string, std::vector<Sample>> samples;
  std::vector<std::pair<std::string, std::function<void()>>> figures = {
      {"preflight", [&] {
         auto [t, abort] = TimePreflight(client.options, sessions, false);
         samples["preflight"].push_back(t);
         samples["abort"].push_back(abort);
       }},
      {"preflight+layout", [&] {
         auto [t, abort] = TimePreflight(client.options, sessions, true);
         samples["preflight+layout"].push_back(t);
         samples["abort+layout"].push_back(abort);
       }},
      {"run --dry-run", [&] { samples["run --dry-run"].push_back(TimeProcess("run --dry-run", dry_run)); }},
      {"exec true", [&] { samples["exec true"].push_back(TimeExecTrue(client.options, sessions)); }},
      {"pdsh", [&] { samples["pdsh"].push_back(TimeProcess("pdsh", pdsh)); }},
  };
  for (int run = 0; run < runs; ++run) {
    std::string line = fmt::format("{} sessions, run {}:", sessions, run + 1);
    for (size_t k = 0; k < figures.size(); ++k) {
      auto& [name, measure] = figures[(run + k) % figures.size()];
      measure();
      const Sample& s = samples[name].back();
      line += fmt::format(" {} {:.2f} s{};", name, s.wall, s.ok ? "" : " FAILED");
    }
    fmt::print("{}\n", line);
    std::fflush(stdout);
  }
  std::map<std::string, Row> rows;
  for (const auto& [name, list] : samples) rows[name] = Summarize(list);
  return rows;
}

void Print(const std::map<std::string, Row>& rows, int sessions, int runs) {
  const Row& pdsh = rows.at("pdsh");
  fmt::print("median of {} runs, {} sessions; pdsh -R ssh -f {} true: {:.2f} s, {:.1f} ms CPU a session{}\n", runs,
             sessions, sessions, pdsh.wall, pdsh.cpu * 1000 / sessions,
             pdsh.failed ? fmt::format(" ({} runs failed)", pdsh.failed) : "");
  auto row = [&](std::string_view what, const std::string& key, std::string_view extra) {
    const Row& r = rows.at(key);
    fmt::print("  {:<58} {:6.2f} s  ratio to pdsh {:.2f}  {:5.1f} ms CPU a session{}{}\n", what, r.wall,
               r.wall / pdsh.wall, r.cpu * 1000 / sessions, extra,
               r.failed ? fmt::format("  ({} of {} runs FAILED, left out)", r.failed, runs) : "");
  };
  row("RunSession::Preflight, no layout (agents answering)", "preflight",
      fmt::format("  (then Abort {:.2f} s)", rows.at("abort").wall));
  row("RunSession::Preflight, hwloc layout on every agent", "preflight+layout",
      fmt::format("  (then Abort {:.2f} s)", rows.at("abort+layout").wall));
  row("topolaunch run --dry-run (whole CLI)", "run --dry-run", "");
  row("SshExecutor: every agent ran `true` and exited 0", "exec true", "");
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::vector<int> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::clamp(std::atoi(argv[i]), 1, 1000));
  if (sizes.empty()) sizes = {64, 256};
  if (geteuid() != 0 || access("/usr/sbin/sshd", X_OK) != 0 || access("/usr/bin/pdsh", X_OK) != 0) {
    fmt::print("launch_bench: needs root, sshd and pdsh (tests/install_deps.sh test); skipped\n");
    return 0;
  }
  TempDir dir;
  SshHome client;
  Result<std::vector<std::unique_ptr<BackgroundProcess>>> sshds =
      StartSshds(dir, client, *std::max_element(sizes.begin(), sizes.end()));
  if (!sshds.ok()) {
    fmt::print(stderr, "sshd did not start: {}\n", sshds.error().Message());
    return 1;
  }
  std::ofstream(dir.File("x.py")) << "print('never run: --dry-run')\n";
  std::map<int, std::map<std::string, Row>> by_size;
  for (int sessions : sizes) by_size[sessions] = Measure(client, dir.path(), sessions, runs);
  for (int sessions : sizes) Print(by_size[sessions], sessions, runs);
  // The login node's cost grows with the sessions: per session, as measured
  // at the largest size, times 2,000 nodes.
  int largest = sizes.back();
  fmt::print("\nprojection to 2,000 nodes (CPU a session as measured at {} sessions; sshd's side is on the nodes):\n",
             largest);
  for (const auto& [key, what] : std::vector<std::pair<std::string, std::string>>{
           {"preflight+layout", "run's preflight with layouts"}, {"run --dry-run", "whole run --dry-run"},
           {"pdsh", "pdsh true"}}) {
    const Row& r = by_size[largest].at(key);
    double cpu = r.cpu / largest * 2000;
    fmt::print("  {:<30} {:6.1f} s of login-node CPU, {:5.2f} s on each of 16 cores\n", what, cpu, cpu / 16);
  }
  return 0;
}
