// Built the way the shared testbed's netns scripts do it: a switch namespace
// holding a bridge, one veth pair per namespace created with its ends
// directly in the two namespaces (no interface ever exists in the root
// namespace), and `unreachable 10.200.0.0/24` in the root namespace so no
// test packet can leave through the default route. Each sshd runs under
// `nsenter --net` + `unshare --uts --mount` (its own host name, and the
// testbed's hosts file bind-mounted over /etc/hosts and a sysfs of its own
// network namespace over /sys, so /sys/class/net lists the node's own
// interfaces as on a real node, and /dev/null over root's ~/.bashrc, in a
// private mount namespace, which its sessions inherit) in the foreground
// (-D), so its PID is known; its per-connection children call setsid, so
// teardown also kills whatever `ip netns pids` still finds.
#include "support/netns_testbed.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace topolaunch::testing {

namespace {

Status Run(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = std::chrono::seconds(30);
  ProcessResult r = RunProcess(spec);
  if (r.exit_code == 0) return Ok{};
  return Error(ErrorCode::kUnavailable, fmt::format("{}", fmt::join(spec.argv, " ")), r.Describe());
}

std::string Output(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = std::chrono::seconds(30);
  return RunProcess(spec).out;
}

std::vector<pid_t> NamespacePids(const std::string& ns) {
  std::vector<pid_t> pids;
  std::istringstream in(Output({"ip", "netns", "pids", ns}));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

void KillNamespace(const std::string& ns) {
  for (int round = 0; round < 3; ++round) {
    std::vector<pid_t> pids = NamespacePids(ns);
    if (pids.empty()) break;
    for (pid_t pid : pids) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  (void)Run({"ip", "netns", "del", ns});
}

bool HaveProgram(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"})
    if (access((std::string(dir) + name).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

std::optional<std::string> NetnsTestbed::Unavailable() {
  if (geteuid() != 0) return "network namespaces need root";
  if (!HaveProgram("ip")) return std::nullopt;  // Start fails and names it: a missing package is no reason to skip
  if (Output({"ip", "netns", "list"}).find("Object \"netns\" is unknown") != std::string::npos)
    return "`ip netns` is unavailable";
  return std::nullopt;
}

void RemoveStaleTestbeds() {
  std::istringstream in(Output({"ip", "netns", "list"}));
  for (std::string line; std::getline(in, line);) {
    std::string name = line.substr(0, line.find(' '));
    if (name.rfind("tl", 0) != 0) continue;
    pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + 2));
    if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) KillNamespace(name);
  }
}

Result<std::unique_ptr<NetnsTestbed>> NetnsTestbed::Start(int nodes, std::vector<std::string> sshd_options) {
  if (auto why = Unavailable()) return Error(ErrorCode::kUnavailable, "testbed", *why);
  for (const char* program : {"ip", "sshd", "ssh-keygen", "nsenter", "unshare"})
    if (!HaveProgram(program))
      return Error(ErrorCode::kUnavailable, program, "not installed (bash tests/install_deps.sh test)");
  RemoveStaleTestbeds();
  std::unique_ptr<NetnsTestbed> testbed(new NetnsTestbed);
  if (Status built = testbed->Build(nodes, sshd_options); !built.ok()) return built.take_error();
  return testbed;
}

NetnsTestbed::~NetnsTestbed() { TearDown(); }

std::string NetnsTestbed::NodeName(int i) const { return fmt::format("node{}", i); }
std::string NetnsTestbed::NodeAddress(int i) const { return fmt::format("10.200.0.{}", i + 1); }

SshOptions NetnsTestbed::ClientSshOptions(const std::string& home, const std::string& known_hosts) const {
  SshOptions options;
  options.local_user = "root";
  options.home = home;
  options.config = ParseSshConfig(SshConfigText(), "config").value();
  options.identity_files = {ClientKey()};
  options.known_hosts_file = known_hosts;
  return options;
}

std::string NetnsTestbed::SshConfigText() const {
  std::string text;
  for (int i = 1; i <= nodes(); ++i) text += fmt::format("Host {}\n  HostName {}\n", NodeName(i), NodeAddress(i));
  return text;
}

namespace {

// The root namespace's route is shared by every testbed on this machine
// (parallel test processes). Each testbed holds a file in kRouteUsers while
// it lives; adding the route, and removing it when the last user goes, happen
// under one lock, so a testbed that is ending cannot take the route from one
// that is starting.
constexpr const char* kRouteUsers = "/run/topolaunch-testbeds";

class RouteLock {
 public:
  RouteLock() : fd_(open("/run/lock/topolaunch-testbed-route.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) (void)flock(fd_, LOCK_EX);
  }
  ~RouteLock() {
    if (fd_ >= 0) close(fd_);
  }
  RouteLock(const RouteLock&) = delete;
  RouteLock& operator=(const RouteLock&) = delete;

 private:
  int fd_;
};

// Whether a live testbed (this process's or another's) or the shared
// testbed's feas-* namespaces still use the route; entries of processes that
// are gone (a test killed mid-run) are removed. Called under RouteLock.
bool RouteHasUsers() {
  std::error_code ec;
  bool users = false;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(kRouteUsers, ec)) {
    std::string name = entry.path().filename().string();  // tl<pid>-<n>
    size_t dash = name.find('-');
    std::string pid = name.size() > 2 && dash != std::string::npos ? name.substr(2, dash - 2) : "";
    if (!pid.empty() && std::filesystem::exists("/proc/" + pid, ec)) users = true;
    else stale.push_back(entry.path());
  }
  for (const std::filesystem::path& path : stale) std::filesystem::remove(path, ec);
  return users || Output({"ip", "netns", "list"}).find("feas-") != std::string::npos;
}

}  // namespace

Status NetnsTestbed::Build(int nodes, const std::vector<std::string>& sshd_options) {
  static int counter = 0;
  prefix_ = fmt::format("tl{}-{}", getpid(), counter++);
  {
    RouteLock lock;
    std::filesystem::create_directories(kRouteUsers);
    std::ofstream(std::string(kRouteUsers) + "/" + prefix_) << getpid() << "\n";
    route_user_ = true;
    if (Output({"ip", "route", "show", "10.200.0.0/24"}).empty()) {
      (void)Run({"ip", "route", "add", "unreachable", "10.200.0.0/24"});
      if (Output({"ip", "route", "show", "10.200.0.0/24"}).empty())
        return Error(ErrorCode::kUnavailable, "ip route", "cannot add `unreachable 10.200.0.0/24`");
    }
  }
  for (const char* type : {"ed25519", "ecdsa"})
    if (Status s = Run({"ssh-keygen", "-q", "-t", type, "-N", "", "-C", "tl-host", "-f", dir_.File(fmt::format("host_{}", type))}); !s.ok())
      return s;
  if (Status s = Run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "tl-client", "-f", ClientKey()}); !s.ok()) return s;
  std::filesystem::copy_file(ClientKey() + ".pub", dir_.File("authorized_keys"));
  std::filesystem::create_directories("/run/sshd");
  switch_ns_ = prefix_ + "-sw";
  head_ns_ = prefix_ + "-head";
  for (int i = 1; i <= nodes; ++i) node_ns_.push_back(fmt::format("{}-n{}", prefix_, i));
  if (Status s = Run({"ip", "netns", "add", switch_ns_}); !s.ok()) return s;
  std::vector<std::vector<std::string>> steps = {
      {"ip", "-n", switch_ns_, "link", "set", "lo", "up"},
      {"ip", "-n", switch_ns_, "link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"},
      {"ip", "-n", switch_ns_, "link", "set", "br0", "up"}};
  std::vector<std::string> members = {head_ns_};
  members.insert(members.end(), node_ns_.begin(), node_ns_.end());
  for (size_t k = 0; k < members.size(); ++k) {
    const std::string& ns = members[k];
    std::string port = fmt::format("p{}", k);
    steps.push_back({"ip", "netns", "add", ns});
    steps.push_back({"ip", "-n", ns, "link", "set", "lo", "up"});
    steps.push_back({"ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", switch_ns_});
    steps.push_back({"ip", "-n", switch_ns_, "link", "set", port, "master", "br0", "up"});
    steps.push_back({"ip", "-n", ns, "addr", "add", fmt::format("10.200.0.{}/24", k + 1), "dev", "eth0"});
    steps.push_back({"ip", "-n", ns, "link", "set", "eth0", "up"});
  }
  for (const auto& step : steps)
    if (Status s = Run(step); !s.ok()) return s;
  std::string host_key = ReadFile(dir_.File("host_ed25519.pub"));
  std::string key = host_key.substr(0, host_key.rfind(' '));
  std::string known;
  for (int i = 1; i <= nodes; ++i) known += fmt::format("{},{} {}\n", NodeName(i), NodeAddress(i), key);
  std::ofstream(KnownHosts()) << known;
  if (Status s = WriteClientFiles(nodes); !s.ok()) return s;
  sshd_options_ = sshd_options;
  sshds_.resize(nodes);
  for (int i = 1; i <= nodes; ++i)
    if (Status s = StartSshd(i); !s.ok()) return s;
  return Ok{};
}

Status NetnsTestbed::WriteClientFiles(int nodes) {
  std::string hosts = "127.0.0.1 localhost\n::1 localhost\n";
  for (int i = 1; i <= nodes; ++i) hosts += fmt::format("{} {}\n", NodeAddress(i), NodeName(i));
  std::ofstream(HostsFile()) << hosts;
  std::string dot_ssh = ClientHome() + "/.ssh";
  std::error_code ec;
  std::filesystem::create_directories(dot_ssh, ec);
  std::ofstream(dot_ssh + "/config") << SshConfigText();
  for (const auto& [from, to] : {std::pair{KnownHosts(), "known_hosts"}, std::pair{ClientKey(), "id_ed25519"},
                                 std::pair{ClientKey() + ".pub", "id_ed25519.pub"}})
    if (!ec) std::filesystem::copy_file(from, dot_ssh + "/" + to, ec);
  if (ec) return Error(ErrorCode::kUnavailable, dot_ssh, ec.message());
  return Ok{};
}

ProcessSpec NetnsTestbed::InHead(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env) const {
  ProcessSpec spec;
  spec.argv = {"nsenter", "--net=/run/netns/" + head_ns_, "--"};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.env = {{"HOME", ClientHome()}};
  spec.env.insert(spec.env.end(), env.begin(), env.end());
  return spec;
}

// A /sys of the node's own network (its interfaces), with the machine's
// cgroups (where it has them) moved back on top of it: slurmd needs them.
// root's ~/.bashrc reads as empty on a node: Debian's bash runs it even for
// the `bash -c` that sshd starts each command with, and a developer's one
// (here `pyenv init`, whose rehash takes a lock: about 1 s a session, one
// at a time) made 30 sessions to one node take over 30 s, past the tests'
// waits. A node's sessions must not depend on the machine's dotfiles.
ProcessSpec NetnsTestbed::OnNode(int i, std::vector<std::string> argv) const {
  ProcessSpec spec;
  spec.argv = {"nsenter", "--net=/run/netns/" + NodeNamespace(i), "unshare", "--uts", "--mount", "--propagation",
               "private", "--", "/bin/sh", "-c",
               "hostname \"$0\" && mount --bind \"$1\" /etc/hosts && "
               "{ [ ! -f ~root/.bashrc ] || mount --bind /dev/null ~root/.bashrc; } && "
               "if [ -d /sys/fs/cgroup ]; then cg=$(mktemp -d) && mount --rbind /sys/fs/cgroup \"$cg\" && "
               "mount -t sysfs sysfs /sys && mount --move \"$cg\" /sys/fs/cgroup && rmdir \"$cg\"; "
               "else mount -t sysfs sysfs /sys; fi && shift && exec \"$@\"",
               NodeName(i), HostsFile()};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  return spec;
}

Status NetnsTestbed::StartSshd(int i) {
  std::string config = dir_.File("sshd_config");
  if (!std::filesystem::exists(config)) {
    std::ofstream(config) << fmt::format(
        "HostKey {0}/host_ed25519\nHostKey {0}/host_ecdsa\nAuthorizedKeysFile {0}/authorized_keys\n"
        "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\n"
        "PidFile none\nLogLevel INFO\n",
        dir_.path());
  }
  ProcessSpec spec = OnNode(i, {"/usr/sbin/sshd", "-D", "-e", "-f", config, "-o", "ListenAddress=" + NodeAddress(i)});
  for (const std::string& option : sshd_options_) spec.argv.insert(spec.argv.end(), {"-o", option});
  auto sshd = BackgroundProcess::Start(spec, dir_.File(fmt::format("sshd-{}.log", i)));
  if (!sshd.ok()) return sshd.take_error();
  if (Status up = (*sshd)->WaitForLog("Server listening on", std::chrono::seconds(10)); !up.ok()) return up;
  sshds_.at(i - 1) = std::move(*sshd);
  return Ok{};
}

void NetnsTestbed::StopNode(int i) {
  for (pid_t pid : NamespacePids(NodeNamespace(i))) kill(pid, SIGKILL);
  sshds_.at(i - 1).reset();  // reaps it
}

Status NetnsTestbed::RestartNode(int i) {
  StopNode(i);
  return StartSshd(i);
}

std::vector<pid_t> NetnsTestbed::PidsInNode(int i) const { return NamespacePids(NodeNamespace(i)); }

void NetnsTestbed::TearDown() {
  sshds_.clear();  // SIGKILL to each sshd's process group, reaped
  for (const std::string& ns : node_ns_) KillNamespace(ns);
  if (!head_ns_.empty()) KillNamespace(head_ns_);
  if (!switch_ns_.empty()) KillNamespace(switch_ns_);
  // The route is shared (see RouteLock, and the shared testbed's feas-*
  // namespaces): whoever finishes last, not whoever added it, removes it.
  if (!route_user_) return;
  RouteLock lock;
  std::error_code ec;
  std::filesystem::remove(std::string(kRouteUsers) + "/" + prefix_, ec);
  route_user_ = false;
  if (!RouteHasUsers() && !Output({"ip", "route", "show", "10.200.0.0/24"}).empty())
    (void)Run({"ip", "route", "del", "unreachable", "10.200.0.0/24"});
}

std::optional<std::string> NetnsTestbed::OrphanedRoute() {
  RouteLock lock;
  if (RouteHasUsers()) return std::nullopt;
  std::string route = Output({"ip", "route", "show", "10.200.0.0/24"});
  if (route.empty()) return std::nullopt;
  return route;
}

NetnsTestbed::EnterHead::EnterHead(const NetnsTestbed& testbed) {
  saved_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int target = open(("/run/netns/" + testbed.HeadNamespace()).c_str(), O_RDONLY | O_CLOEXEC);
  ok_ = saved_fd_ >= 0 && target >= 0 && setns(target, CLONE_NEWNET) == 0;
  if (target >= 0) close(target);
}

NetnsTestbed::EnterHead::~EnterHead() {
  if (saved_fd_ >= 0) {
    if (ok_) setns(saved_fd_, CLONE_NEWNET);
    close(saved_fd_);
  }
}

}  // namespace topolaunch::testing
