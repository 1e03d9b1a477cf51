#include "launch/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace topolaunch {

std::map<pid_t, ProcessEntry> ReadProcessTable() {
  std::map<pid_t, ProcessEntry> table;
  DIR* proc = opendir("/proc");
  if (!proc) return table;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atol(entry->d_name));
    if (pid <= 0) continue;
    // Plain read(2): a process may vanish between open and read (ESRCH),
    // which must simply skip it (an ifstream would throw here).
    int fd = open((std::string("/proc/") + entry->d_name + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[1024];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0) continue;
    std::string stat(buf, static_cast<size_t>(got));
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long parent = 0;
    if (!(rest >> state >> parent)) continue;
    table[pid] = ProcessEntry{static_cast<pid_t>(parent), state == 'Z' || state == 'X'};
  }
  closedir(proc);
  return table;
}

std::vector<pid_t> LiveDescendants(const std::map<pid_t, ProcessEntry>& table, pid_t root) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, entry] : table) children.emplace(entry.parent, pid);
  std::vector<pid_t> order, frontier = {root};
  std::set<pid_t> seen = {root};
  while (!frontier.empty()) {
    pid_t parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      if (!seen.insert(it->second).second) continue;
      frontier.push_back(it->second);
      if (!table.at(it->second).zombie) order.push_back(it->second);
    }
  }
  return order;
}

size_t StopProcessTree(pid_t root, std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point kill_at = Clock::now() + grace, give_up = kill_at + std::chrono::seconds(2);
  std::set<pid_t> termed;
  for (;;) {
    std::vector<pid_t> live = LiveDescendants(ReadProcessTable(), root);
    if (live.empty()) return 0;
    bool killing = Clock::now() >= kill_at;
    if (Clock::now() >= give_up) return live.size();
    for (pid_t pid : live) {
      if (killing) kill(pid, SIGKILL);
      else if (termed.insert(pid).second) kill(pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace topolaunch
