// The SVG and HTML writers: golden files for small fabrics (rewritten with
// TOPOLAUNCH_UPDATE_GOLDEN=1), text that stays well-formed XML whatever the
// fabric's node descriptions hold, and a page that fetches nothing.
#include "show/svg_render.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "rankmap/plan_builder.h"
#include "show/html_page.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "support/topology_samples.h"

namespace topolaunch::testing {
namespace {

// Compares `actual` with tests/data/show/NAME, or rewrites it.
void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = TestDataDir() + "/show/" + name;
  if (const char* update = std::getenv("TOPOLAUNCH_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing (TOPOLAUNCH_UPDATE_GOLDEN=1 writes it)";
  EXPECT_TRUE(expected == actual) << name << " differs from the golden file; if the change is meant, "
                                  << "rerun with TOPOLAUNCH_UPDATE_GOLDEN=1 and review the diff";
}

Plan PlanOf(const Topology& t) {
  PlanRequest request;
  request.nproc_per_node = 4;
  request.exclude = {"node04"};
  Result<Plan> plan = ComputePlan(&t, request);
  EXPECT_TRUE(plan.ok());
  return plan.ok() ? *plan : Plan{};
}

AuditReport AuditOf(const Topology& t) {
  const HcaAttachment& cable = t.FindHost("node02")->hcas.front();
  AuditReport audit;
  audit.findings = {{Severity::kError, "link_width", "node02", cable.switch_guid, "", cable.switch_port, std::nullopt,
                     "mlx5_0 port 1 at 1X (4X supported)", {"width 1X below 4X"}},
                    {Severity::kWarning, "gpu_pcie_link", "node03", std::nullopt, "", std::nullopt, std::nullopt,
                     "gpu 0000:07:00.0 pcie 16GT/s x8", {}}};
  return audit;
}

TEST(SvgGolden, TwoLevelFabric) {
  ExpectGolden("two-level.svg", RenderSvg(DrawFabric(TwoLevelTopology(), nullptr, nullptr, {})));
}

TEST(SvgGolden, TwoLevelWithPlanAndAudit) {
  Topology t = TwoLevelTopology();
  Plan plan = PlanOf(t);
  AuditReport audit = AuditOf(t);
  ExpectGolden("two-level-plan-audit.svg", RenderSvg(DrawFabric(t, &plan, &audit, {})));
}

TEST(SvgGolden, MultiRailHostsHaveAWirePerRail) {
  ExpectGolden("multi-rail.svg", RenderSvg(DrawFabric(MultiRailTopology(), nullptr, nullptr, {})));
}

TEST(SvgGolden, ThreeLevelCollapsedWithAPlan) {
  Topology t = ThreeLevelTopology();
  PlanRequest request;
  request.nproc_per_node = 8;
  Result<Plan> plan = ComputePlan(&t, request);
  ASSERT_TRUE(plan.ok());
  ExpectGolden("three-level-boxes.html", RenderHtml(DrawFabric(t, &*plan, nullptr, DrawOptions{0})));
}

TEST(XmlText, EscapesMarkupAndReplacesWhatXmlForbids) {
  EXPECT_EQ(XmlText("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(XmlText("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(XmlText("bell\x07" "esc\x1b" "del\x7f"), "bell\uFFFDesc\uFFFDdel\uFFFD");
  EXPECT_EQ(XmlText("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82"), "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82");
  EXPECT_EQ(XmlText("\xc3"), "\uFFFD");                  // cut short
  EXPECT_EQ(XmlText("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate
  EXPECT_EQ(XmlText("\xef\xbf\xbf"), "\uFFFD\uFFFD\uFFFD");  // U+FFFF
  EXPECT_EQ(XmlText("\xc0\xaf"), "\uFFFD\uFFFD");          // overlong '/'
}

TEST(SvgRender, HostileSwitchNamesStayText) {
  Topology t = HandTopology()
                   .Switch(0x10, "</text><script>alert(1)</script>\x01", 1)
                   .Hca("node1", 0x20, "mlx5_0", 0x10)
                   .Build();
  std::string svg = RenderSvg(DrawFabric(t, nullptr, nullptr, {}));
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find('\x01'), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
  std::string html = RenderHtml(DrawFabric(t, nullptr, nullptr, {}));
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
}

TEST(HtmlPage, APlannedHostNameCannotCloseTheScript) {
  // Names in a plan the topology lacks reach the page's JSON unchecked.
  Topology t = TwoLevelTopology();
  Plan plan;
  plan.nproc_per_node = 1;
  plan.nodes.push_back({"</script><script>alert(1)</script>", 0, std::nullopt, {}, {}, "", 0, {}});
  std::string html = RenderHtml(DrawFabric(t, &plan, nullptr, DrawOptions{0}));
  EXPECT_EQ(html.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script>\\u003cscript>alert(1)"), std::string::npos) << "the name is in the page, escaped";
}

TEST(HtmlPage, FetchesNothingAndCarriesTheBoxedHosts) {
  Topology t = ThreeLevelTopology();
  std::string html = RenderHtml(DrawFabric(t, nullptr, nullptr, DrawOptions{0}));
  const std::string svg_namespace = "http://www.w3.org/2000/svg";  // a name, not a fetch
  ASSERT_NE(html.find(svg_namespace), std::string::npos);
  for (size_t at; (at = html.find(svg_namespace)) != std::string::npos;) html.erase(at, svg_namespace.size());
  for (const char* fetch : {"http://", "https://", "src=", "@import", "url(http", "fetch("})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  for (const TopologyHost& h : t.hosts) EXPECT_NE(html.find("[\"" + h.name + "\","), std::string::npos) << h.name;
}

}  // namespace
}  // namespace topolaunch::testing
