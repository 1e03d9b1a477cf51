// The plan for people: a table of nodes and ranks, and a small tree of the
// fabric showing where the ranks land.
#pragma once

#include <string>

#include "topolaunch/plan.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// Summary line, per-level crossings, the node table with one line per local
/// rank (GPU, NUMA, CPUs, NIC), the fabric tree (groups > leaves > hosts with
/// their rank ranges), then hosts off the fabric, skipped hosts and notes.
/// `topology` (may be null) supplies switch names; GUIDs are shown without it.
std::string FormatPlanText(const Plan& plan, const Topology* topology);

}  // namespace topolaunch
