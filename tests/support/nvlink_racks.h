// NVL72-class racks for tests: the GB200 tray fixtures of tests/data/nvlink
// (layout JSON), copied onto the hosts of a topology with the cluster UUID
// and clique ID of the rack each host is in.
#pragma once

#include <map>
#include <string>

#include "topolaunch/layout.h"
#include "topolaunch/topology.h"

namespace topolaunch::testing {

/// A tray fixture of tests/data/nvlink, read with JsonLayoutSource. A fixture
/// that does not read is printed and gives an empty layout (no GPUs), which
/// fails every test using it.
HostLayout TrayLayout(const std::string& file = "gb200-tray.layout.json");

/// The cluster UUID of rack `rack` ("00000000-0000-4000-8000-0000000000NN").
std::string RackUuid(int rack);

/// `tray` with every GPU registered in clique 1 of RackUuid(rack).
HostLayout InRack(HostLayout tray, int rack);

/// Gives every host named in `racks` the healthy tray in its rack (hostname
/// set); other hosts keep their layout.
void PutInRacks(Topology& topology, const std::map<std::string, int>& racks);

}  // namespace topolaunch::testing
