#include "support/ibsim_harness.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace topolaunch::testing {

namespace {

using Clock = std::chrono::steady_clock;

// ibsim binds an abstract datagram socket "NAME:ctl" (with its trailing NUL,
// as umad2sim spells it); clients retry forever while it is absent, so wait
// for it here rather than let the first client stall.
bool ControlSocketUp(const std::string& socket_name) {
  std::string name = socket_name + ":ctl";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.size() + 3 > sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size() + 1);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), size) == 0;
  close(fd);
  return up;
}

constexpr std::string_view kPrompts[] = {"sim> ", "sim (inactive)> "};

}  // namespace

std::string UniqueSocketName() {
  static std::atomic<int> counter{0};
  return fmt::format("tl-{}-{}", getpid(), counter++);
}

Result<std::unique_ptr<IbsimFabric>> IbsimFabric::Start(const std::string& netfile, const IbsimOptions& options) {
  std::unique_ptr<IbsimFabric> self(new IbsimFabric);
  self->socket_name_ = UniqueSocketName();
  ProcessSpec spec;
  spec.argv = {"ibsim", "-s"};
  auto limit = [&](const char* flag, int value) {
    if (value > 0) spec.argv.insert(spec.argv.end(), {flag, std::to_string(value)});
  };
  limit("-N", options.limits.nodes);
  limit("-S", options.limits.switches);
  limit("-P", options.limits.ports);
  spec.argv.push_back(netfile);
  spec.env = {{"IBSIM_SOCKNAME", self->socket_name_}};
  spec.cwd = self->work_dir();
  Result<std::unique_ptr<BackgroundProcess>> started = BackgroundProcess::Start(spec, self->dir_.File("ibsim.log"));
  if (!started.ok()) return started.take_error();
  self->ibsim_ = std::move(started).value();

  Clock::time_point deadline = Clock::now() + options.startup_timeout;
  if (Status ready = self->ibsim_->WaitForLog("Network simulator ready.", options.startup_timeout); !ready.ok())
    return Error(ready.error().code, netfile, "ibsim did not start: " + ready.error().Message());
  while (!ControlSocketUp(self->socket_name_)) {
    if (!self->ibsim_->Running() || Clock::now() >= deadline)
      return Error(ErrorCode::kTimeout, netfile, "ibsim printed its start-up lines but its socket never came up: " +
                                                     Tail(self->Log()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return self;
}

ProcessResult IbsimFabric::Run(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                               std::vector<std::pair<std::string, std::string>> env) const {
  ProcessSpec spec;
  spec.argv = {"ibsim-run"};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.env = std::move(env);
  spec.env.emplace_back("IBSIM_SOCKNAME", socket_name_);
  spec.cwd = work_dir();
  spec.timeout = timeout;
  return RunProcess(spec);
}

Result<std::string> IbsimFabric::Console(const std::string& command, std::chrono::milliseconds timeout) {
  size_t before = Log().size();
  if (!ibsim_->WriteStdin(command + "\n")) return Error(ErrorCode::kUnavailable, "ibsim console", "ibsim is gone");
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    std::string log = Log();
    // ibsim flushes its reply together with the next prompt, which ends the
    // log until the next command ("sim> " also starts the Help text).
    for (std::string_view prompt : kPrompts)
      if (log.size() >= before + prompt.size() && std::string_view(log).ends_with(prompt))
        return log.substr(before, log.size() - before - prompt.size());
    if (!ibsim_->Running()) return Error(ErrorCode::kUnavailable, "ibsim console", "ibsim exited: " + Tail(log));
    if (Clock::now() >= deadline)
      return Error(ErrorCode::kTimeout, "ibsim console", fmt::format("no prompt after '{}': {}", command, Tail(log)));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<std::unique_ptr<OpenSm>> OpenSm::Start(const IbsimFabric& fabric, std::chrono::milliseconds timeout) {
  std::unique_ptr<OpenSm> self(new OpenSm);
  std::string dir = fabric.work_dir() + "/opensm";
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Error(ErrorCode::kUnavailable, dir, std::strerror(errno));
  self->log_path_ = dir + "/osm.log";
  ProcessSpec spec;
  spec.argv = {"ibsim-run", "opensm", "-f", self->log_path_, "-s", "0"};
  spec.env = {{"IBSIM_SOCKNAME", fabric.socket_name()}, {"OSM_TMP_DIR", dir}, {"OSM_CACHE_DIR", dir}};
  spec.cwd = fabric.work_dir();
  Result<std::unique_ptr<BackgroundProcess>> started = BackgroundProcess::Start(spec, dir + "/stdout.log");
  if (!started.ok()) return started.take_error();
  self->opensm_ = std::move(started).value();
  // The state line goes to the -f log.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (Status master = self->opensm_->WaitForFileText(self->log_path_, "Entering MASTER state", timeout); !master.ok())
    return Error(master.error().code, "opensm", "OpenSM did not become master: " + master.error().Message());
  // MASTER comes before the first sweep has brought every port up; on a
  // loaded machine a client could still see Init ports. Wait until
  // iblinkinfo shows no port left in Initialize or Armed.
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    ProcessResult links = fabric.Run({"iblinkinfo"}, std::chrono::seconds(30));
    last = links.out;
    bool settled = links.exit_code == 0 && last.find("Active/") != std::string::npos &&
                   last.find("Initialize/") == std::string::npos && last.find("Armed/") == std::string::npos;
    if (settled) return self;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Error(ErrorCode::kTimeout, "opensm", "ports did not all become Active; iblinkinfo said: " + Tail(last));
}

}  // namespace topolaunch::testing
