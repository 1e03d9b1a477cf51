// The readable summary of a topology (`discover --format text`).
#pragma once

#include <string>

#include "topolaunch/topology.h"

namespace topolaunch {

/// Switches per level, hosts per leaf (compressed host lists), rails, link
/// rates and unmapped CAs, for people to read.
std::string FormatTopologySummary(const Topology& topology);

}  // namespace topolaunch
