#include "support/proc_scan.h"

#include <dirent.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/subprocess.h"

namespace topolaunch::testing {

std::vector<std::string> Cmdline(pid_t pid) {
  std::string raw = ReadFile(fmt::format("/proc/{}/cmdline", pid));
  std::vector<std::string> args;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    args.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return args;
}

pid_t ParentPid(pid_t pid) {
  std::string stat = ReadFile(fmt::format("/proc/{}/stat", pid));
  size_t end = stat.rfind(')');  // the command name may hold spaces and ')'
  if (end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(end + 1));
  std::string state;
  pid_t parent = -1;
  fields >> state >> parent;
  return parent;
}

std::vector<pid_t> AllPids() {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (!proc) return pids;
  while (dirent* entry = readdir(proc))
    if (pid_t pid = static_cast<pid_t>(std::atol(entry->d_name)); pid > 0) pids.push_back(pid);
  closedir(proc);
  return pids;
}

std::vector<std::string> CommandLinesHolding(const std::string& needle) {
  std::vector<std::string> found;
  for (pid_t pid : AllPids()) {
    std::string line = fmt::format("{}", fmt::join(Cmdline(pid), " "));
    if (line.find(needle) != std::string::npos) found.push_back(fmt::format("pid {}: {}", pid, line));
  }
  return found;
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  using Clock = std::chrono::steady_clock;
  for (Clock::time_point end = Clock::now() + limit;; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    if (done()) return true;
    if (Clock::now() >= end) return false;
  }
}

}  // namespace topolaunch::testing
