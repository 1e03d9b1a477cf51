// The processes below a supervisor, found through /proc: every live
// process whose parent chain leads to `root`. With `root` a child
// subreaper (prctl PR_SET_CHILD_SUBREAPER), processes that daemonized or
// called setsid below it are re-parented to it and so are still found.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <vector>

namespace topolaunch {

/// One process: its parent, and whether it is a zombie (dead, not reaped).
struct ProcessEntry {
  pid_t parent = 0;
  bool zombie = false;
};

/// pid → entry for every process /proc shows now (unreadable ones skipped).
std::map<pid_t, ProcessEntry> ReadProcessTable();

/// Live (non-zombie) descendants of `root` in `table`, parents before children.
std::vector<pid_t> LiveDescendants(const std::map<pid_t, ProcessEntry>& table, pid_t root);

/// Stops everything below `root`: SIGTERM to each live descendant (repeated,
/// for processes forked meanwhile), SIGKILL to what is left after `grace`,
/// then waits (up to 2 s more) until none is left. Returns how many were
/// still alive after all that (0 on success).
size_t StopProcessTree(pid_t root, std::chrono::milliseconds grace);

}  // namespace topolaunch
