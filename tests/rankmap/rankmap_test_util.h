// Shared helpers for the rank-map tests: generated fabrics as topologies.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "discover/ibnetdiscover_parser.h"
#include "support/fabric_generator.h"
#include "topolaunch/topology.h"

namespace topolaunch::testing {

/// The topology of a generated fabric, as `discover --fabric FILE` builds it.
/// A generator bug (text that does not parse) is printed and gives an empty
/// topology, which fails every test using it. (No gtest here: the benchmark
/// uses this too.)
inline Topology TopologyOf(const GeneratedFabric& fabric) {
  Result<Fabric> parsed = ParseIbnetdiscover(fabric.netfile, "generated.ibnet");
  if (!parsed.ok()) {
    fmt::print(stderr, "generated fabric does not parse: {}\n", parsed.error().Message());
    return {};
  }
  return BuildTopology(*parsed, {}, Generated{"test", "", "ibnetdiscover"});
}

/// Renames every host by a random permutation of the names, so that names
/// do not follow the cabling.
inline void ShuffleHostNames(Topology& topology, std::mt19937& rng) {
  std::vector<std::string> names;
  for (const TopologyHost& h : topology.hosts) names.push_back(h.name);
  std::shuffle(names.begin(), names.end(), rng);
  for (size_t i = 0; i < names.size(); ++i) topology.hosts[i].name = names[i];
}

inline std::vector<std::string> HostNames(const Topology& topology) {
  std::vector<std::string> names;
  for (const TopologyHost& h : topology.hosts) names.push_back(h.name);
  return names;
}

}  // namespace topolaunch::testing
