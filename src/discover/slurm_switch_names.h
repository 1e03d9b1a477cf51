// Switch names Slurm's topology.conf can hold (see slurm_topology_writer.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topolaunch/topology.h"

namespace topolaunch {

inline constexpr size_t kMaxSlurmSwitchName = 64;

/// The name a switch goes by in topology.conf, from its node description
/// alone: the switch's own name inside Mellanox ("MF0;NAME:MODEL/U1") and
/// Voltaire ("Voltaire 4036 # NAME": one word after " # ") descriptions,
/// characters other than letters, digits, '-' and '_' turned into '_' (runs
/// into one, none at either end), cut to 64 characters.
/// Empty when nothing usable is left.
std::string SlurmSwitchBaseName(std::string_view description);

/// Unique names for `switches` (by GUID): base names where they are unique;
/// base name + "-" + 16 hex digits of the GUID for those that share one;
/// "sw-" + GUID for those without one. All at most 64 characters.
std::map<Guid, std::string> SlurmSwitchNames(const std::vector<const TopologySwitch*>& switches);

}  // namespace topolaunch
