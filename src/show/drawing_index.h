// Inside src/show: the layout's lookups that the plan and audit overlays
// need, and the steps DrawFabric() runs in order.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "show/fabric_drawing.h"

namespace topolaunch {

struct DrawingIndex {
  std::unordered_map<std::string, size_t> host_shape;  ///< host name -> its shape, or the box holding it
  std::unordered_map<Guid, size_t> switch_shape;
  std::map<PortRef, size_t> end_wire;                  ///< every end of a drawn cable -> its wire
};

/// Places switches by level, hosts (or boxes) under their rail-0 leaf, the
/// hosts off the fabric and `extra_hosts` (a plan's hosts the topology does
/// not know) at the right, unmapped CAs by reason and switches with no path
/// to a host below; wires coloured by rate. Coordinates start at the top
/// margin; DrawFabric moves everything below the legend. Fills `index`.
Drawing LayOutFabric(const Topology& topology, const std::vector<std::string>& extra_hosts, bool collapse,
                     DrawingIndex& index);

/// Colours hosts by node rank, marks skipped and spare hosts, records the
/// ring's stops and adds the plan's legend lines.
void OverlayPlan(const Plan& plan, const DrawingIndex& index, Drawing& drawing);

/// Puts each finding on the wire, switch or host it is about (worst
/// severity wins) and adds the audit's legend lines.
void OverlayAudit(const AuditReport& audit, const DrawingIndex& index, Drawing& drawing);

/// `text` cut to `max_chars` code points, the last one an ellipsis.
std::string ShortText(std::string_view text, size_t max_chars);

/// The colour each severity is drawn in.
std::string_view SeverityColor(Severity severity);

}  // namespace topolaunch
