// What `topolaunch show` draws, laid out: boxes, wires, the ring and the
// legend, in pixels. DrawFabric() makes it from a topology (and a plan and
// an audit when given); svg_render.h and html_page.h write it out. Keeping
// the picture a value lets tests check what was drawn without parsing SVG,
// and keeps both renderings of one input identical.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "audit/audit_findings.h"
#include "topolaunch/plan.h"
#include "topolaunch/topology.h"

namespace topolaunch {

enum class ShapeKind {
  kSwitch,
  kHost,
  kLeafBox,        ///< a leaf's hosts collapsed into one counted box
  kUnmappedGroup,  ///< the CAs that name no host, one box per reason
  kOffFabricBox,   ///< hosts without a cabled HCA, collapsed
};

/// "switch", "host", "leafbox", "unmapped", "offfabric": the SVG class.
std::string_view ShapeClass(ShapeKind kind);

/// How a host stands in a plan.
enum class PlanMark { kNone, kPlanned, kSkipped, kSpare, kNotPlanned };

/// One host inside a collapsed box (what the HTML expands on click).
struct BoxedHost {
  std::string name;
  int node_rank = -1;               ///< -1: not in the plan
  std::optional<Severity> worst;
  bool operator==(const BoxedHost&) const = default;
};

struct Shape {
  ShapeKind kind = ShapeKind::kHost;
  std::string id;                   ///< unique and XML-safe: "s3", "h12", "b0", "u1", "o0"
  std::string name;                 ///< switch or host name, the leaf's name for a box, the reason for CAs
  std::vector<std::string> lines;   ///< text drawn inside, top to bottom (already shortened)
  int x = 0, y = 0, w = 0, h = 0;
  std::string fill = "#ffffff";
  PlanMark mark = PlanMark::kNone;
  int node_rank = -1;               ///< a planned host's node rank
  std::optional<Severity> worst;    ///< the worst audit finding drawn on it
  std::vector<std::string> details; ///< the tooltip and click details, a line each
  std::vector<BoxedHost> boxed;     ///< a box's hosts: the topology's (natural order), then a plan's it lacks
  int hosts = 0;                    ///< hosts it stands for: 1 for a host, the count for a box
  bool operator==(const Shape&) const = default;
};

struct Wire {
  std::string id;                   ///< "l0", "l1", ...
  std::string from, to;             ///< shape ids, `from` the lower end
  int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  bool arc = false;                 ///< both ends on one row: drawn as a curve above it
  int cables = 0;                   ///< topology links this wire stands for
  std::string color;
  int width_tenths = 12;            ///< stroke width in tenths of a pixel
  bool down = false;                ///< a cable of it is not Active
  std::optional<Severity> worst;
  std::vector<std::string> details;
  bool operator==(const Wire&) const = default;
};

struct LegendLine {
  std::string text;
  std::string swatch;               ///< a colour drawn before the text; empty for none
  bool dashed = false;              ///< the swatch is a dashed line
  bool operator==(const LegendLine&) const = default;
};

/// Text drawn on its own, left-aligned at (x, y) (the baseline).
struct Caption {
  int x = 0, y = 0;
  std::string text;
  bool operator==(const Caption&) const = default;
};

/// What the drawing claims it holds, for the page's own consistency check:
/// the topology's switches, hosts (plus planned hosts it does not know) and
/// cables, which the drawn shapes and wires must add up to.
struct DrawingCounts {
  int switches = 0;
  int hosts = 0;
  int cables = 0;
  int cables_not_drawn = 0;         ///< a cable to a router or another node the topology does not model
  int nodes = 0;                    ///< the plan's nodes (0 without a plan)
  int hosts_not_in_topology = 0;    ///< planned hosts the topology lacks (in `hosts`)
  int findings_drawn = 0;
  int findings_not_drawn = 0;
  bool operator==(const DrawingCounts&) const = default;
};

struct Drawing {
  int width = 0, height = 0;
  std::string title;
  std::vector<LegendLine> legend;
  std::vector<Shape> shapes;        ///< switches top row first, then hosts or boxes, then CA groups
  std::vector<Wire> wires;
  std::vector<std::pair<int, int>> ring;  ///< the ring's stops in node-rank order (not closed)
  std::vector<Caption> captions;    ///< row names ("level 2", "leaf", ...) and area titles
  bool collapsed = false;
  DrawingCounts counts;
  bool operator==(const Drawing&) const = default;
};

struct DrawOptions {
  /// Past this many hosts, every leaf's hosts are one box (0: always).
  int max_hosts_drawn = 256;
};

/// Lays out `topology` with `plan` and `audit` (each may be null). Never
/// fails: hosts a plan names that the topology lacks are drawn off the
/// fabric, findings that name nothing drawn are counted in the legend.
Drawing DrawFabric(const Topology& topology, const Plan* plan, const AuditReport* audit, const DrawOptions& options);

}  // namespace topolaunch
