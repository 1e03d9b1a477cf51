// What `show` draws, checked on the Drawing itself: every switch, host and
// cable accounted for, hosts under their leaf, boxes past the size limit,
// the plan's ranks and ring, findings on what they are about.
#include "show/fabric_drawing.h"

#include <set>

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "rankmap/plan_builder.h"
#include "rankmap/rankmap_test_util.h"
#include "show/drawing_index.h"
#include "support/topology_samples.h"

namespace topolaunch::testing {
namespace {

std::vector<const Shape*> ShapesOf(const Drawing& d, ShapeKind kind) {
  std::vector<const Shape*> out;
  for (const Shape& s : d.shapes)
    if (s.kind == kind) out.push_back(&s);
  return out;
}

const Shape* Named(const Drawing& d, ShapeKind kind, const std::string& name) {
  for (const Shape& s : d.shapes)
    if (s.kind == kind && s.name == name) return &s;
  return nullptr;
}

int Cables(const Drawing& d) {
  int n = 0;
  for (const Wire& w : d.wires) n += w.cables;
  return n;
}

int BoxedHosts(const Drawing& d) {
  int n = 0;
  for (const Shape& s : d.shapes)
    if (s.kind == ShapeKind::kLeafBox || s.kind == ShapeKind::kOffFabricBox) n += s.hosts;
  return n;
}

Plan PlanOf(const Topology& t, int nnodes = 0) {
  PlanRequest request;
  request.nproc_per_node = 2;
  if (nnodes) request.nnodes = nnodes;
  Result<Plan> plan = ComputePlan(&t, request);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().Message());
  return plan.ok() ? *plan : Plan{};
}

TEST(DrawFabric, EverySwitchHostAndCableOfTheSamplesIsDrawnOnce) {
  for (const Topology& t : {TwoLevelTopology(), ThreeLevelTopology(), MultiRailTopology(), HostedSpineTopology(),
                            LeafMeshTopology()}) {
    Drawing d = DrawFabric(t, nullptr, nullptr, {});
    EXPECT_EQ(ShapesOf(d, ShapeKind::kSwitch).size(), t.switches.size());
    EXPECT_EQ(ShapesOf(d, ShapeKind::kHost).size(), t.hosts.size());
    EXPECT_EQ(Cables(d), static_cast<int>(t.links.size()));
    EXPECT_EQ(d.counts.cables_not_drawn, 0);
    std::set<std::string> ids;
    for (const Shape& s : d.shapes) EXPECT_TRUE(ids.insert(s.id).second) << s.id;
    for (const Wire& w : d.wires) EXPECT_TRUE(ids.insert(w.id).second) << w.id;
  }
}

TEST(DrawFabric, LevelsAreRowsHighestOnTopAndHostsSitUnderTheirLeaf) {
  Topology t = ThreeLevelTopology();
  Drawing d = DrawFabric(t, nullptr, nullptr, {});
  std::map<int, int> row_of_level;
  for (const TopologySwitch& s : t.switches) {
    const Shape* shape = Named(d, ShapeKind::kSwitch, s.name);
    ASSERT_NE(shape, nullptr) << s.name;
    if (s.level == 0) continue;
    auto [at, fresh] = row_of_level.emplace(s.level, shape->y);
    EXPECT_EQ(at->second, shape->y) << "one row per level: " << s.name;
  }
  EXPECT_LT(row_of_level[3], row_of_level[2]);
  EXPECT_LT(row_of_level[2], row_of_level[1]);
  for (const TopologyHost& h : t.hosts) {
    const Shape* host = Named(d, ShapeKind::kHost, h.name);
    ASSERT_NE(host, nullptr);
    EXPECT_GT(host->y, row_of_level[1]);
    // The leaf of its first cable is above it, within its column.
    const TopologySwitch* leaf = t.FindSwitch(*h.hcas.front().switch_guid);
    const Shape* leaf_shape = Named(d, ShapeKind::kSwitch, leaf->name);
    EXPECT_LT(std::abs((host->x + host->w / 2) - (leaf_shape->x + leaf_shape->w / 2)), 4 * 86) << h.name;
  }
}

TEST(DrawFabric, AMultiRailHostHasOneWirePerCabledPort) {
  Topology t = MultiRailTopology();
  Drawing d = DrawFabric(t, nullptr, nullptr, {});
  for (const TopologyHost& h : t.hosts) {
    const Shape* host = Named(d, ShapeKind::kHost, h.name);
    int cabled = static_cast<int>(std::count_if(h.hcas.begin(), h.hcas.end(), [](const HcaAttachment& a) { return a.switch_guid.has_value(); }));
    int wires = static_cast<int>(std::count_if(d.wires.begin(), d.wires.end(), [&](const Wire& w) { return w.from == host->id || w.to == host->id; }));
    EXPECT_EQ(wires, cabled) << h.name;
  }
}

TEST(DrawFabric, PastTheLimitEachLeafIsOneCountedBox) {
  Topology t = ThreeLevelTopology();
  DrawOptions options;
  options.max_hosts_drawn = static_cast<int>(t.hosts.size()) - 1;
  Drawing d = DrawFabric(t, nullptr, nullptr, options);
  EXPECT_TRUE(d.collapsed);
  EXPECT_TRUE(ShapesOf(d, ShapeKind::kHost).empty());
  EXPECT_EQ(BoxedHosts(d), static_cast<int>(t.hosts.size()));
  EXPECT_EQ(Cables(d), static_cast<int>(t.links.size()));
  for (const Shape* box : ShapesOf(d, ShapeKind::kLeafBox)) {
    EXPECT_EQ(box->boxed.size(), static_cast<size_t>(box->hosts));
    EXPECT_EQ(box->lines.front(), fmt::format("{} hosts", box->hosts));
  }
  options.max_hosts_drawn = static_cast<int>(t.hosts.size());
  EXPECT_FALSE(DrawFabric(t, nullptr, nullptr, options).collapsed);
}

TEST(DrawFabric, TenThousandHostsStayBoxesOfTheirLeaves) {
  FatTreeSpec spec;
  spec.leaves = 250;
  spec.hosts_per_leaf = 40;
  spec.spines = 20;
  Topology t = TopologyOf(TwoLevelFatTree(spec));
  ASSERT_EQ(t.hosts.size(), 10000u);
  Drawing d = DrawFabric(t, nullptr, nullptr, {});
  EXPECT_EQ(ShapesOf(d, ShapeKind::kLeafBox).size(), 250u);
  EXPECT_EQ(BoxedHosts(d), 10000);
  EXPECT_EQ(Cables(d), static_cast<int>(t.links.size()));
  EXPECT_EQ(d.wires.size(), 250u * 20 + 250u);  // leaf-spine pairs, and each box to its leaf
}

TEST(DrawFabric, APlanColoursByNodeRankAndTheRingFollowsIt) {
  Topology t = ThreeLevelTopology();
  Plan plan = PlanOf(t, 5);
  plan.skipped.push_back({"gpu08", "excluded"});
  Drawing d = DrawFabric(t, &plan, nullptr, {});
  ASSERT_EQ(d.ring.size(), plan.nodes.size());
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const Shape* host = Named(d, ShapeKind::kHost, plan.nodes[i].host);
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(host->node_rank, static_cast<int>(i));
    EXPECT_EQ(host->mark, PlanMark::kPlanned);
    EXPECT_EQ(d.ring[i], std::pair(host->x + host->w / 2, host->y + host->h - 3));
  }
  EXPECT_NE(Named(d, ShapeKind::kHost, plan.nodes[0].host)->fill, Named(d, ShapeKind::kHost, plan.nodes[4].host)->fill);
  EXPECT_EQ(Named(d, ShapeKind::kHost, "gpu08")->mark, PlanMark::kSkipped);
  ASSERT_FALSE(plan.idle.empty()) << "--nnodes 5 of 8 leaves spares";
  for (const std::string& spare : plan.idle) {
    if (spare == "gpu08") continue;  // skipped by hand above
    EXPECT_EQ(Named(d, ShapeKind::kHost, spare)->mark, PlanMark::kSpare) << spare;
  }
  bool crossings = std::any_of(d.legend.begin(), d.legend.end(), [&](const LegendLine& l) {
    return l.text.starts_with(fmt::format("leaf: ring crosses {} time", plan.metrics.ring_leaf_crossings));
  });
  EXPECT_TRUE(crossings);
}

TEST(DrawFabric, BoxesShowTheirNodeRankRangeAndTheRingVisitsEachOnce) {
  Topology t = ThreeLevelTopology();
  Plan plan = PlanOf(t);
  Drawing d = DrawFabric(t, &plan, nullptr, DrawOptions{0});
  std::vector<const Shape*> boxes = ShapesOf(d, ShapeKind::kLeafBox);
  for (const Shape* box : boxes) {
    int lo = 1 << 30, hi = -1;
    for (const BoxedHost& b : box->boxed) lo = std::min(lo, b.node_rank), hi = std::max(hi, b.node_rank);
    EXPECT_EQ(box->lines[1], fmt::format("nodes {}-{}", lo, hi));
  }
  EXPECT_EQ(d.ring.size(), boxes.size()) << "a plan keeps each leaf's hosts consecutive";
}

TEST(DrawFabric, PlannedHostsTheTopologyLacksAreDrawnOffTheFabric) {
  Topology t = TwoLevelTopology();
  Plan plan = PlanOf(t);
  PlanNode stranger = plan.nodes.back();
  stranger.host = "elsewhere1";
  stranger.node_rank = static_cast<int>(plan.nodes.size());
  plan.nodes.push_back(stranger);
  Drawing d = DrawFabric(t, &plan, nullptr, {});
  EXPECT_EQ(d.counts.hosts, static_cast<int>(t.hosts.size()) + 1);
  const Shape* shape = Named(d, ShapeKind::kHost, "elsewhere1");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->node_rank, stranger.node_rank);
  EXPECT_EQ(d.ring.size(), plan.nodes.size());
}

TEST(DrawFabric, FindingsLandOnTheCableSwitchOrHostTheyNameAndTheWorstShows) {
  Topology t = TwoLevelTopology();
  const TopologyHost& node01 = *t.FindHost("node01");
  const HcaAttachment& cable = node01.hcas.front();
  AuditReport audit;
  Finding on_cable{Severity::kWarning, "link_speed", "node01", cable.switch_guid, "", cable.switch_port, std::nullopt, "slow", {}};
  Finding worse_on_cable = on_cable;
  worse_on_cable.severity = Severity::kCritical;
  Finding on_host{Severity::kError, "gpu_pcie_link", "node03", std::nullopt, "", std::nullopt, std::nullopt, "x8", {}};
  Finding on_switch{Severity::kInfo, "port_counter", "", t.switches.front().guid, "", std::nullopt, std::nullopt, "ok", {}};
  Finding nowhere{Severity::kWarning, "sm", "", std::nullopt, "", std::nullopt, std::nullopt, "two SMs", {}};
  audit.findings = {on_cable, worse_on_cable, on_host, on_switch, nowhere};
  Drawing d = DrawFabric(t, nullptr, &audit, {});
  const Shape* host01 = Named(d, ShapeKind::kHost, "node01");
  auto wire = std::find_if(d.wires.begin(), d.wires.end(), [&](const Wire& w) { return w.from == host01->id; });
  ASSERT_NE(wire, d.wires.end());
  EXPECT_EQ(wire->worst, Severity::kCritical);
  EXPECT_FALSE(host01->worst) << "a cable's finding is drawn on the cable";
  EXPECT_EQ(Named(d, ShapeKind::kHost, "node03")->worst, Severity::kError);
  EXPECT_EQ(Named(d, ShapeKind::kSwitch, t.switches.front().name)->worst, Severity::kInfo);
  EXPECT_EQ(d.counts.findings_drawn, 4);
  EXPECT_EQ(d.counts.findings_not_drawn, 1);
  bool listed = std::any_of(d.legend.begin(), d.legend.end(), [](const LegendLine& l) { return l.text.find("two SMs") != std::string::npos; });
  EXPECT_TRUE(listed) << "a finding about no one thing is still in the picture";

  // Collapsed, the host's finding is its box's.
  Drawing boxes = DrawFabric(t, nullptr, &audit, DrawOptions{0});
  const Shape* box = nullptr;
  for (const Shape& s : boxes.shapes)
    for (const BoxedHost& b : s.boxed)
      if (b.name == "node03") {
        box = &s;
        EXPECT_EQ(b.worst, Severity::kError);
      }
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->worst, Severity::kError);
  // A cable's finding stays on the box's wire, names its host there, and
  // marks the host's entry and box: the box shows its hosts' worst.
  for (const Shape& s : boxes.shapes)
    for (const BoxedHost& b : s.boxed)
      if (b.name == "node01") {
        EXPECT_EQ(b.worst, Severity::kCritical);
        EXPECT_EQ(s.worst, Severity::kCritical);
        auto wire = std::find_if(boxes.wires.begin(), boxes.wires.end(), [&](const Wire& w) { return w.from == s.id; });
        ASSERT_NE(wire, boxes.wires.end());
        EXPECT_EQ(wire->worst, Severity::kCritical);
        EXPECT_TRUE(std::any_of(wire->details.begin(), wire->details.end(),
                                [](const std::string& l) { return l.starts_with("node01: critical [link_speed]"); }));
      }
  EXPECT_EQ(boxes.counts.findings_drawn, 4) << "each finding counted once";
}

TEST(DrawFabric, TheSameInputDrawsTheSamePicture) {
  Topology t = MultiRailTopology();
  Plan plan = PlanOf(t);
  EXPECT_EQ(DrawFabric(t, &plan, nullptr, {}), DrawFabric(t, &plan, nullptr, {}));
}

TEST(DrawFabric, UnmappedCasAreGroupedByReasonWithTheirCables) {
  Topology t = ThreeLevelTopology();
  ASSERT_FALSE(t.unmapped.empty());
  Drawing d = DrawFabric(t, nullptr, nullptr, {});
  std::map<std::string, int> by_reason;
  for (const UnmappedCa& u : t.unmapped) ++by_reason[u.reason];
  std::vector<const Shape*> groups = ShapesOf(d, ShapeKind::kUnmappedGroup);
  ASSERT_EQ(groups.size(), by_reason.size());
  for (const Shape* g : groups) EXPECT_EQ(g->lines.front(), fmt::format("{} CA{}", by_reason[g->name], by_reason[g->name] == 1 ? "" : "s"));
}

TEST(ShortText, CutsByCodePointsWithAnEllipsis) {
  EXPECT_EQ(ShortText("node01", 11), "node01");
  EXPECT_EQ(ShortText("a-very-long-host-name", 8), "a-very-\u2026");
  EXPECT_EQ(ShortText("\u00e9\u00e9\u00e9\u00e9", 3), "\u00e9\u00e9\u2026");
}

}  // namespace
}  // namespace topolaunch::testing
