// Gathers the preflight facts on this machine: the answer `topolaunch
// agent` gives before it starts anything (preflight.h has the messages).
#pragma once

#include "launch/preflight.h"

namespace topolaunch {

/// What this machine can say about `request`: its short host name, each
/// program's path (PATH search; a name holding '/' is checked as given),
/// whether the master port can be bound, the live hwloc layout and GPU
/// count (when asked), RDMA ports from sysfs, the interface toward
/// master_addr, and the clock, read last. Never fails: what cannot be
/// gathered is left empty with its *_problem text set.
PreflightReply GatherPreflight(const PreflightRequest& request);

}  // namespace topolaunch
