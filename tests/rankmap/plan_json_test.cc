#include "rankmap/plan_json.h"

#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "rankmap/audit_health.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

Plan SmallPlan() {
  Plan p;
  p.nproc_per_node = 2;
  p.world_size = 4;
  p.fabric = "known";
  for (int n = 0; n < 2; ++n) {
    PlanNode node;
    node.host = n == 0 ? "node01" : "node02";
    node.node_rank = n;
    node.first_rank = 2 * n;
    node.leaf = 0x1001;
    node.leaves = {0x1001};
    node.groups = {0};
    for (int r = 0; r < 2; ++r) {
      RankBinding b;
      b.local_rank = r;
      b.gpu = fmt::format("0000:0{}:00.0", r + 1);
      b.cuda_index = r;
      b.numa = r;
      b.cpus = {r * 4, r * 4 + 1};
      b.nic = "mlx5_0";
      node.local.push_back(b);
    }
    p.nodes.push_back(node);
  }
  p.metrics.levels = {{1, "leaf", 0, 0, 0, 0, 2, 2, 4, 6}, {2, "spine_group", 0, 0, 0, 0, 0, 0, 0, 0}};
  p.skipped = {{"node03", "excluded (--exclude)"}};
  p.notes = {"a note"};
  return p;
}

TEST(PlanJsonTest, RoundTripsAndHasSpecKeys) {
  Plan plan = SmallPlan();
  std::string text = FormatPlanJson(plan);
  nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema"], "topolaunch.plan/1");
  EXPECT_EQ(doc["nodes"][1]["leaf"], "0x0000000000001001");
  EXPECT_EQ(doc["nodes"][1]["local"][1]["cpus"], "4-5");
  EXPECT_EQ(doc["metrics"]["ring_leaf_crossings_lower_bound"], 0);
  Result<Plan> back = ParsePlanJson(text, "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, plan);
  EXPECT_EQ(FormatPlanJson(*back), text);
}

// Written straight out (no DOM), the plan is still exactly the pretty form
// nlohmann gives the same document, with every optional part present.
TEST(PlanJsonTest, TheTextIsNlohmannsPrettyFormOfItself) {
  Plan plan = SmallPlan();
  plan.nodes[1].leaf.reset();
  plan.nodes[1].groups.clear();
  plan.nodes[1].nvlink_domain = "nvl0";
  plan.nodes[1].local[0] = RankBinding{};
  plan.metrics.nvlink_domain = LevelCrossings{0, "nvlink_domain", 1, 1, 2, 2, 0, 0, 0, 0};
  plan.unknown_hosts = {"node09"};
  plan.rails = {{0, {"mlx5_0"}, {0x1001, 0x1002}}, {1, {}, {}}};
  plan.notes = {"quote \" tab\t", "bad \xff byte", "é"};
  std::string text = FormatPlanJson(plan);
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(DumpJsonText(doc, 2) + "\n", text);
  EXPECT_EQ(doc["nodes"][1]["leaf"], nullptr);
  EXPECT_EQ(doc["nodes"][1]["spine_group"], nullptr);
  EXPECT_EQ(doc["nodes"][1]["local"][0]["cpus"], nullptr);
  EXPECT_EQ(doc["metrics"]["nvlink_domain"]["crossings"], 1);
  EXPECT_EQ(doc["rails"][1]["devices"], nlohmann::ordered_json::array());
  Result<Plan> back = ParsePlanJson(text, "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(FormatPlanJson(*back), text);
}

TEST(PlanJsonTest, PlansWrittenBeforeTheTreeCountsStillRead) {
  Plan plan = SmallPlan();
  nlohmann::json doc = nlohmann::json::parse(FormatPlanJson(plan));
  for (nlohmann::json& level : doc["metrics"]["levels"])
    for (const char* key : {"tree_crossings", "tree_lower_bound", "hostname_order_tree_crossings",
                            "given_order_tree_crossings"})
      ASSERT_EQ(level.erase(key), 1u) << key;
  Result<Plan> back = ParsePlanJson(doc.dump(), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(back->metrics.levels[0].tree_crossings, 0);
  EXPECT_EQ(back->metrics.levels[0].crossings, plan.metrics.levels[0].crossings);
}

TEST(PlanJsonTest, ReportsEveryInconsistency) {
  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string where;
  };
  std::vector<Case> cases = {
      {"schema", [](auto& d) { d["schema"] = "topolaunch.plan/9"; }, "p: $.schema"},
      {"node rank gap", [](auto& d) { d["nodes"][1]["node_rank"] = 2; }, "p: $.nodes[1].node_rank"},
      {"first rank", [](auto& d) { d["nodes"][1]["first_rank"] = 3; }, "p: $.nodes[1].first_rank"},
      {"missing local", [](auto& d) { d["nodes"][0]["local"].erase(1); }, "p: $.nodes[0].local"},
      {"world size", [](auto& d) { d["world_size"] = 5; }, "p: $.world_size"},
      {"duplicate host", [](auto& d) { d["nodes"][1]["host"] = "node01"; }, "p: $.nodes[1].host"},
      {"bad cpus", [](auto& d) { d["nodes"][0]["local"][0]["cpus"] = "3-1"; }, "p: $.nodes[0].local[0].cpus"},
      {"no metrics", [](auto& d) { d.erase("metrics"); }, "p: $.metrics"},
      {"bad leaf", [](auto& d) { d["nodes"][0]["leaf"] = "leaf01"; }, "p: $.nodes[0].leaf"},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = nlohmann::json::parse(FormatPlanJson(SmallPlan()));
    c.edit(doc);
    Result<Plan> plan = ParsePlanJson(doc.dump(), "p");
    ASSERT_FALSE(plan.ok()) << c.name;
    EXPECT_EQ(plan.error().code, ErrorCode::kBadInput);
    bool found = false;
    for (const Problem& p : plan.error().problems) found = found || p.where == c.where;
    EXPECT_TRUE(found) << c.name << ": " << plan.error().Message();
  }
  EXPECT_FALSE(ParsePlanJson("{", "p").ok());
  EXPECT_FALSE(ParsePlanJson("[]", "p").ok());
}

TEST(AuditHealthTest, ErrorAndCriticalFindingsMakeHostsUnhealthy) {
  Topology t = testing::TwoLevelTopology();
  std::string audit = R"({"schema": "topolaunch.audit/1", "future_key": 1, "findings": [
    {"severity": "warning", "check": "link_speed", "host": "node01", "message": "slow"},
    {"severity": "error", "check": "hca_state", "host": "node02", "message": "port down", "extra": true},
    {"severity": "critical", "check": "symbol_errors", "switch_guid": "0x0000000000001002", "port": 1, "message": "500 errors"},
    {"severity": "info", "check": "x", "host": null, "message": "fine"}]})";
  auto unhealthy = ReadUnhealthyHosts(audit, "audit.json", &t);
  ASSERT_TRUE(unhealthy.ok()) << unhealthy.error().Message();
  EXPECT_EQ(unhealthy->size(), 2u);
  EXPECT_EQ(unhealthy->at("node02"), "audit error hca_state: port down");
  EXPECT_EQ(unhealthy->at("node03"), "audit critical symbol_errors: 500 errors");
}

TEST(AuditHealthTest, BadReportsNameEveryProblem) {
  auto bad = ReadUnhealthyHosts(R"({"schema": "x", "findings": [{"severity": "fatal", "message": "m"}]})", "a.json", nullptr);
  ASSERT_FALSE(bad.ok());
  std::vector<std::string> wheres;
  for (const Problem& p : bad.error().problems) wheres.push_back(p.where);
  EXPECT_EQ(wheres, (std::vector<std::string>{"a.json: $.schema", "a.json: $.findings[0].check",
                                              "a.json: $.findings[0].severity"}));
}

}  // namespace
}  // namespace topolaunch
