#include "show/fabric_drawing.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "show/drawing_index.h"

namespace topolaunch {

namespace {

constexpr int kLegendTop = 22, kLegendLine = 17, kLegendGap = 24;

// Everything moves down by `dy` (the legend's room).
void MoveDown(Drawing& d, int dy) {
  for (Shape& s : d.shapes) s.y += dy;
  for (Wire& w : d.wires) w.y1 += dy, w.y2 += dy;
  for (auto& stop : d.ring) stop.second += dy;
  for (Caption& c : d.captions) c.y += dy;
  d.height += dy;
}

}  // namespace

std::string_view ShapeClass(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::kSwitch: return "switch";
    case ShapeKind::kHost: return "host";
    case ShapeKind::kLeafBox: return "leafbox";
    case ShapeKind::kUnmappedGroup: return "unmapped";
    case ShapeKind::kOffFabricBox: return "offfabric";
  }
  return "host";
}

std::string_view SeverityColor(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "#1e88e5";
    case Severity::kWarning: return "#f59e0b";
    case Severity::kError: return "#e53935";
    case Severity::kCritical: return "#7a0019";
  }
  return "#e53935";
}

std::string ShortText(std::string_view text, size_t max_chars) {
  // Code points start at every byte that is not a continuation byte.
  size_t points = 0, cut = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (points == max_chars - 1 && cut == text.size()) cut = i;
    ++points;
  }
  if (points <= max_chars || max_chars == 0) return std::string(text);
  return std::string(text.substr(0, cut)) + "\u2026";
}

Drawing DrawFabric(const Topology& topology, const Plan* plan, const AuditReport* audit, const DrawOptions& options) {
  std::vector<std::string> extra;
  if (plan) {
    std::unordered_set<std::string_view> known;
    for (const TopologyHost& h : topology.hosts) known.insert(h.name);
    for (const PlanNode& n : plan->nodes)
      if (!known.count(n.host)) extra.push_back(n.host);
  }
  bool collapse = static_cast<int>(topology.hosts.size() + extra.size()) > options.max_hosts_drawn;
  DrawingIndex index;
  Drawing d = LayOutFabric(topology, extra, collapse, index);
  if (plan) OverlayPlan(*plan, index, d);
  if (audit) OverlayAudit(*audit, index, d);
  d.title = fmt::format("topolaunch show: {} switches, {} hosts, {} cables{}{}", d.counts.switches, d.counts.hosts,
                        d.counts.cables, plan ? fmt::format(", plan of {} nodes", plan->nodes.size()) : "",
                        audit ? fmt::format(", {} audit findings", audit->findings.size()) : "");
  size_t widest = 0;
  for (const LegendLine& l : d.legend) widest = std::max(widest, l.text.size());
  MoveDown(d, kLegendTop + static_cast<int>(d.legend.size()) * kLegendLine + kLegendGap);
  d.width = std::max(d.width, 60 + static_cast<int>(widest) * 7);
  return d;
}

}  // namespace topolaunch
