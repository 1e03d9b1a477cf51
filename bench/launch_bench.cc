// launch benchmark ("run" foundation): prints figures, asserts nothing.
//
// Time from start to all remote agents started and finished, for 64 SSH
// sessions against one sshd on loopback (MaxStartups raised to 200), as
// SshExecutor running `topolaunch agent` with a trivial command, against
// `pdsh -R ssh -f 64 -w h[1-64] true` in the same run, alternating, with
// the same key, known_hosts and ssh config (h1..h64 all name 127.0.0.1).
// Needs root (the sessions log in as root), sshd, pdsh.
//
// Usage: launch_bench [RUNS]   (default 5)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench_stats.h"

#include "launch/launch_message.h"
#include "launch/ssh_executor.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

using namespace topolaunch;
using namespace topolaunch::testing;
using Clock = std::chrono::steady_clock;

using topolaunch::bench::Median;

namespace {

constexpr int kSessions = 64;

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

// Seconds until every agent has started (first) and finished (second).
std::pair<double, double> TimeSshExecutor(const SshOptions& options) {
  std::vector<LaunchRequest> requests;
  for (int i = 1; i <= kSessions; ++i) {
    LaunchRequest request{fmt::format("h{}", i), {{TopolaunchBinary(), "agent"}}};
    request.stdin_data = FormatLaunchMessage({{{"true"}}, std::chrono::milliseconds(1000)});
    request.close_stdin = false;  // the agent reads EOF as "stop"
    requests.push_back(request);
  }
  int agents_started = 0;
  Clock::time_point start = Clock::now();
  SshExecutor executor(options);
  std::vector<StartResult> started = executor.StartAll(requests, [](size_t i, OutputStream, std::string_view line) {
    fmt::print(stderr, "h{}: {}\n", i + 1, line);  // agents print nothing unless something is wrong
  });
  double t_started = std::chrono::duration<double>(Clock::now() - start).count();
  for (StartResult& s : started) {
    if (!s.ok()) {
      fmt::print(stderr, "{}\n", s.error().Message());
      continue;
    }
    std::optional<ExitInfo> info = (*s)->Wait(std::chrono::seconds(60));
    agents_started += info && info->exit_code == 0;
    if (!info || info->exit_code != 0) fmt::print(stderr, "agent: {}\n", info ? info->Describe() : "still running");
  }
  double t_done = std::chrono::duration<double>(Clock::now() - start).count();
  if (agents_started != kSessions) fmt::print(stderr, "only {} of {} agents ran\n", agents_started, kSessions);
  return {t_started, t_done};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  if (geteuid() != 0 || access("/usr/sbin/sshd", X_OK) != 0 || access("/usr/bin/pdsh", X_OK) != 0) {
    fmt::print("launch_bench: needs root, sshd and pdsh (tests/install_deps.sh test); skipped\n");
    return 0;
  }
  TempDir dir;
  int port = FreeLoopbackPort();
  if (!Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.File("host")}) ||
      !Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir.File("id_ed25519")}))
    return 1;
  std::ofstream(dir.File("authorized_keys")) << ReadFile(dir.File("id_ed25519.pub"));
  std::string host_pub = ReadFile(dir.File("host.pub"));
  std::ofstream(dir.File("known_hosts")) << fmt::format("[127.0.0.1]:{} {}\n", port, host_pub.substr(0, host_pub.rfind(' ')));
  std::string ssh_config = fmt::format("Host h*\n  HostName 127.0.0.1\n  Port {}\n  User root\n", port);
  std::ofstream(dir.File("ssh_config")) << ssh_config;
  std::ofstream(dir.File("sshd_config")) << fmt::format(
      "HostKey {0}/host\nAuthorizedKeysFile {0}/authorized_keys\nPermitRootLogin prohibit-password\nStrictModes no\n"
      "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\nPidFile none\n"
      "MaxStartups 200\nMaxSessions 200\nListenAddress 127.0.0.1\nPort {1}\n",
      dir.path(), port);
  std::filesystem::create_directories("/run/sshd");
  auto sshd = BackgroundProcess::Start(Spec({"/usr/sbin/sshd", "-D", "-e", "-f", dir.File("sshd_config")}), dir.File("sshd.log"));
  if (!sshd.ok() || !(*sshd)->WaitForLog("Server listening", std::chrono::seconds(10)).ok()) {
    fmt::print(stderr, "sshd did not start: {}\n", ReadFile(dir.File("sshd.log")));
    return 1;
  }
  SshOptions options;
  options.local_user = "root";
  options.home = dir.path();
  options.config = ParseSshConfig(ssh_config, "ssh_config").value();
  options.identity_files = {dir.File("id_ed25519")};
  options.known_hosts_file = dir.File("known_hosts");
  options.max_parallel_connects = kSessions;  // sshd's MaxStartups is 200 here
  ProcessSpec pdsh = Spec({"pdsh", "-R", "ssh", "-f", "64", "-w", fmt::format("h[1-{}]", kSessions), "true"});
  pdsh.env = {{"PDSH_SSH_ARGS", fmt::format("-F {0}/ssh_config -o BatchMode=yes -o UserKnownHostsFile={0}/known_hosts "
                                            "-i {0}/id_ed25519 -l%u %h", dir.path())}};
  std::vector<double> ours_started, ours_done, theirs;
  for (int run = 0; run < runs; ++run) {
    auto [t_started, t_done] = TimeSshExecutor(options);
    ours_started.push_back(t_started);
    ours_done.push_back(t_done);
    ProcessResult r = RunProcess(pdsh);
    if (r.exit_code != 0) fmt::print(stderr, "pdsh: {}\n", r.Describe());
    theirs.push_back(r.seconds);
    fmt::print("run {}: SshExecutor+agent started {:.3f} s, done {:.3f} s; pdsh {:.3f} s\n", run + 1, t_started,
               t_done, r.seconds);
  }
  fmt::print("median of {} runs, {} sessions: all agents started {:.3f} s, all done {:.3f} s; pdsh -R ssh {:.3f} s; "
             "ratio (done / pdsh) {:.2f}\n",
             runs, kSessions, Median(ours_started), Median(ours_done), Median(theirs),
             Median(ours_done) / Median(theirs));
  return 0;
}
