// Fabric checks of `topolaunch audit`: pure functions of the fabric model
// (and the topology built from it, for names). Each returns its findings;
// none fails, since a fabric that was read can always be judged.
#pragma once

#include <vector>

#include "audit/audit_findings.h"
#include "topolaunch/fabric.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// link_width / link_speed: links narrower or slower than most links of the
/// same kind (host links, switch links) at their switch (error), and links
/// below what both ends support (iblinkinfo's "could be"). The second rule
/// alone is a warning, unless most links of that kind fall short the same
/// way (ibsim advertises 12X everywhere): then one fabric-wide info finding.
std::vector<Finding> CheckLinkRates(const Fabric& fabric, const Topology& topology);

/// port_state: ports that are physically up but Init or Armed (error); when
/// most ports are, one critical finding: no subnet manager has configured
/// the fabric.
std::vector<Finding> CheckPortStates(const Fabric& fabric, const Topology& topology);

/// link_down: cables in the `expected` topology (a baseline topology.json)
/// that the fabric no longer has, each named by the baseline (error).
std::vector<Finding> CheckExpectedLinks(const Fabric& fabric, const Topology& expected);

/// host_rail_count: hosts with fewer active HCA ports than most hosts of
/// their kind (error; audit_host_kinds.h); default_node_description: CAs
/// whose description names an OS default host ("localhost") (warning);
/// unmapped_ca: other CAs that could not be mapped to a host (warning; info
/// for SHARP aggregation nodes and switch management ports, which are never
/// hosts).
std::vector<Finding> CheckHosts(const Fabric& fabric, const Topology& topology);

}  // namespace topolaunch
