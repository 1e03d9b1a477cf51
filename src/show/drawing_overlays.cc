// A plan and an audit drawn over the laid-out fabric.
//
// The plan colours each host by its node rank on one hue scale (blue for
// rank 0 through red for the last), so a leaf of consecutive ranks is one
// band of colour and a host out of place stands out; the ring is a line
// through the hosts (or their boxes) in node-rank order, as NCCL's ring
// visits them, and the legend gives its crossings with their lower bounds.
//
// An audit finding is drawn on the most precise thing it names: the cable at
// its switch port (or at its peer's port), else its host, else its switch.
// A thing with several findings shows the worst. A finding that names
// nothing drawn (a check of the whole fabric) is counted in the legend, so
// nothing the audit said is lost from the picture.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "show/drawing_index.h"

namespace topolaunch {

namespace {

std::string RankColor(int rank, int nodes) {
  int hue = nodes > 1 ? 220 - static_cast<int>(220LL * rank / (nodes - 1)) : 220;
  return fmt::format("hsl({},60%,78%)", hue);
}

std::string LevelLine(const LevelCrossings& l) {
  return fmt::format("{}: ring crosses {} time{} (lower bound {}; hostname order {}), trees {} (lower bound {})", l.name,
                     l.crossings, l.crossings == 1 ? "" : "s", l.lower_bound, l.hostname_order_crossings,
                     l.tree_crossings, l.tree_lower_bound);
}

void MarkBox(Shape& box, const std::unordered_map<std::string, const PlanNode*>& planned,
             const std::unordered_map<std::string, const SkippedHost*>& skipped,
             const std::unordered_set<std::string_view>& idle, int nodes) {
  int lo = -1, hi = -1, skips = 0, spares = 0;
  for (BoxedHost& b : box.boxed) {
    if (auto p = planned.find(b.name); p != planned.end()) {
      b.node_rank = p->second->node_rank;
      lo = lo < 0 ? b.node_rank : std::min(lo, b.node_rank);
      hi = std::max(hi, b.node_rank);
    } else if (skipped.contains(b.name)) {
      ++skips;
    } else if (idle.contains(b.name)) {
      ++spares;
    }
  }
  if (lo >= 0) {
    box.fill = RankColor(lo, nodes);
    box.mark = PlanMark::kPlanned;
    box.node_rank = lo;
    box.lines.push_back(lo == hi ? fmt::format("node {}", lo) : fmt::format("nodes {}-{}", lo, hi));
    box.details.push_back(fmt::format("node ranks {} to {}", lo, hi));
  } else {
    box.mark = skips ? PlanMark::kSkipped : spares ? PlanMark::kSpare : PlanMark::kNotPlanned;
    box.fill = "#eeeeee";
  }
  if (skips || spares) box.details.push_back(fmt::format("{} skipped, {} spare", skips, spares));
}

void Worse(std::optional<Severity>& worst, Severity s) {
  if (!worst || *worst < s) worst = s;
}

// Draws `f` on the cable at its switch port (or its peer's port), if one is
// drawn; false when none is. `line` is the finding as one line of details.
bool PutOnWire(const Finding& f, const std::string& line, const DrawingIndex& index, Drawing& d,
               std::unordered_map<size_t, int>& per_shape) {
  auto wire = index.end_wire.end();
  if (f.switch_guid && f.port) wire = index.end_wire.find(PortRef{*f.switch_guid, *f.port});
  if (wire == index.end_wire.end() && f.peer && f.peer->port > 0) wire = index.end_wire.find(PortRef{f.peer->guid, f.peer->port});
  if (wire == index.end_wire.end()) return false;
  Wire& w = d.wires[wire->second];
  Worse(w.worst, f.severity);
  // The host a cable's finding is about: its own, or the cable's host end. A
  // wire of several cables (a box's, parallel trunks) says whose it is.
  std::string host = !f.host.empty() ? f.host : f.peer && f.peer->kind == "host" ? f.peer->name : "";
  std::string where = !host.empty() ? host : FindingLocation(f);
  w.details.push_back(w.cables > 1 && !where.empty() ? where + ": " + line : line);
  // In a box, the host shows it too: the box's worst, its entry, a search.
  auto h = host.empty() ? index.host_shape.end() : index.host_shape.find(host);
  if (h == index.host_shape.end() || d.shapes[h->second].boxed.empty()) return true;
  Shape& box = d.shapes[h->second];
  Worse(box.worst, f.severity);
  box.details.push_back(host + ": " + line);
  for (BoxedHost& b : box.boxed)
    if (b.name == host) Worse(b.worst, f.severity);
  ++per_shape[h->second];
  return true;
}

}  // namespace

void OverlayPlan(const Plan& plan, const DrawingIndex& index, Drawing& d) {
  int nodes = static_cast<int>(plan.nodes.size());
  d.counts.nodes = nodes;
  std::unordered_map<std::string, const PlanNode*> planned;
  for (const PlanNode& n : plan.nodes) planned.emplace(n.host, &n);
  std::unordered_map<std::string, const SkippedHost*> skipped;
  for (const SkippedHost& s : plan.skipped) skipped.emplace(s.host, &s);
  std::unordered_set<std::string_view> idle(plan.idle.begin(), plan.idle.end());
  size_t skips = plan.skipped.size(), spares = plan.idle.size();
  for (Shape& shape : d.shapes) {
    if (shape.kind == ShapeKind::kLeafBox || shape.kind == ShapeKind::kOffFabricBox) {
      MarkBox(shape, planned, skipped, idle, nodes);
      continue;
    }
    if (shape.kind != ShapeKind::kHost) continue;
    if (auto p = planned.find(shape.name); p != planned.end()) {
      const PlanNode& n = *p->second;
      shape.mark = PlanMark::kPlanned;
      shape.node_rank = n.node_rank;
      shape.fill = RankColor(n.node_rank, nodes);
      shape.lines.push_back(fmt::format("node {}", n.node_rank));
      int last = n.first_rank + std::max<int>(1, static_cast<int>(n.local.size())) - 1;
      shape.details.push_back(fmt::format("node rank {}: ranks {} to {}{}", n.node_rank, n.first_rank, last,
                                          n.nvlink_domain.empty() ? "" : ", NVLink domain " + n.nvlink_domain));
    } else if (auto s = skipped.find(shape.name); s != skipped.end()) {
      shape.mark = PlanMark::kSkipped;
      shape.fill = "#eeeeee";
      shape.lines.push_back("skipped");
      shape.details.push_back(fmt::format("skipped: {}", s->second->reason));
    } else if (idle.contains(shape.name)) {
      shape.mark = PlanMark::kSpare;
      shape.fill = "#fafafa";
      shape.lines.push_back("spare");
      shape.details.push_back("idle: not chosen by --nnodes (a spare for run --max-restarts)");
    } else {
      shape.mark = PlanMark::kNotPlanned;
      shape.fill = "#f6f6f6";
      shape.details.push_back("not in the plan's host pool");
    }
  }
  for (const PlanNode& n : plan.nodes) {
    auto at = index.host_shape.find(n.host);
    if (at == index.host_shape.end()) continue;
    const Shape& s = d.shapes[at->second];
    // On the bottom edge, clear of the name above it.
    std::pair<int, int> stop{s.x + s.w / 2, s.y + s.h - 3};
    if (d.ring.empty() || d.ring.back() != stop) d.ring.push_back(stop);
  }
  if (d.ring.size() > 1 && d.ring.front() == d.ring.back()) d.ring.pop_back();
  d.legend.push_back({fmt::format("plan: {} node{} x {} rank{} (world size {}); fill = node rank, 0 blue to {} red", nodes,
                                  nodes == 1 ? "" : "s", plan.nproc_per_node, plan.nproc_per_node == 1 ? "" : "s",
                                  plan.world_size, std::max(0, nodes - 1)),
                      RankColor(0, nodes), false});
  d.legend.push_back({"the ring, in node-rank order (rank 0 marked by a dot)", "#222222", false});
  for (const LevelCrossings& l : plan.metrics.levels) d.legend.push_back({LevelLine(l), "", false});
  if (plan.metrics.nvlink_domain) d.legend.push_back({LevelLine(*plan.metrics.nvlink_domain), "", false});
  if (skips || spares)
    d.legend.push_back({fmt::format("{} host(s) skipped (hatched), {} idle spare(s) (dashed outline)", skips, spares), "#eeeeee", false});
  if (d.counts.hosts_not_in_topology)
    d.legend.push_back({fmt::format("{} planned host(s) not in the topology, drawn off the fabric", d.counts.hosts_not_in_topology), "", false});
}

void OverlayAudit(const AuditReport& audit, const DrawingIndex& index, Drawing& d) {
  std::map<Severity, int> by_severity;
  int on_wires = 0, on_switches = 0, on_hosts = 0;
  std::vector<const Finding*> not_drawn;
  std::unordered_map<size_t, int> per_shape;
  for (const Finding& f : audit.findings) {
    ++by_severity[f.severity];
    std::string line = fmt::format("{} [{}] {}", SeverityName(f.severity), f.check, f.message);
    if (PutOnWire(f, line, index, d, per_shape)) {
      ++on_wires;
      continue;
    }
    std::optional<size_t> shape;
    bool on_host = false;
    if (auto h = index.host_shape.find(f.host); !f.host.empty() && h != index.host_shape.end()) shape = h->second, on_host = true;
    else if (auto s = f.switch_guid ? index.switch_shape.find(*f.switch_guid) : index.switch_shape.end();
             s != index.switch_shape.end())
      shape = s->second;
    if (!shape) {
      not_drawn.push_back(&f);
      continue;
    }
    Shape& s = d.shapes[*shape];
    Worse(s.worst, f.severity);
    s.details.push_back(on_host && s.kind != ShapeKind::kHost ? f.host + ": " + line : line);
    for (BoxedHost& b : s.boxed)
      if (b.name == f.host) Worse(b.worst, f.severity);
    ++per_shape[*shape];
    ++(on_host ? on_hosts : on_switches);
  }
  for (auto& [shape, count] : per_shape) {
    Shape& s = d.shapes[shape];
    if (s.kind == ShapeKind::kLeafBox || s.kind == ShapeKind::kOffFabricBox)
      s.lines.push_back(fmt::format("{} finding{}: {}", count, count == 1 ? "" : "s", SeverityName(*s.worst)));
  }
  d.counts.findings_drawn = on_wires + on_switches + on_hosts;
  d.counts.findings_not_drawn = static_cast<int>(not_drawn.size());
  d.legend.push_back({fmt::format("audit: {} finding{}, {} on cables, {} on switches, {} on hosts, {} about no one thing",
                                  audit.findings.size(), audit.findings.size() == 1 ? "" : "s", on_wires, on_switches,
                                  on_hosts, not_drawn.size()),
                      "", false});
  for (Severity s : {Severity::kCritical, Severity::kError, Severity::kWarning, Severity::kInfo})
    if (by_severity[s]) d.legend.push_back({fmt::format("{}: {}", SeverityName(s), by_severity[s]), std::string(SeverityColor(s)), false});
  for (size_t i = 0; i < not_drawn.size() && i < 3; ++i)
    d.legend.push_back({fmt::format("not drawn: {} [{}] {}", SeverityName(not_drawn[i]->severity), not_drawn[i]->check,
                                    ShortText(not_drawn[i]->message, 120)),
                        std::string(SeverityColor(not_drawn[i]->severity)), false});
  if (not_drawn.size() > 3) d.legend.push_back({fmt::format("not drawn: {} more (see the audit report)", not_drawn.size() - 3), "", false});
}

}  // namespace topolaunch
