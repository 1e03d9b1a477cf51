#include "rankmap/plan_builder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rankmap/plan_json.h"
#include "rankmap/plan_table.h"
#include "rankmap_test_util.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

HostLayout GpuLayout(int gpus) {
  HostLayout l;
  l.numa_nodes = {{0, 0, *ParseCpuList("0-31", "t"), 0}};
  for (int i = 0; i < gpus; ++i) {
    Gpu g;
    g.pci_bus_id = fmt::format("0000:{:02x}:00.0", i + 1);
    g.numa = 0;
    l.gpus.push_back(g);
  }
  return l;
}

Topology WithLayouts(Topology t, int gpus) {
  for (const std::string& host : testing::HostNames(t)) AttachLayout(t, host, GpuLayout(gpus));
  return t;
}

std::vector<std::string> Hosts(const Plan& plan) {
  std::vector<std::string> out;
  for (const PlanNode& n : plan.nodes) out.push_back(n.host);
  return out;
}

TEST(PlanBuilderTest, AllTopologyHostsByDefaultWithGpuCountAsNproc) {
  Topology t = WithLayouts(testing::TwoLevelTopology(), 4);
  Result<Plan> plan = ComputePlan(&t, {});
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->nproc_per_node, 4);
  EXPECT_EQ(plan->world_size, 16);
  EXPECT_EQ(Hosts(*plan), (std::vector<std::string>{"node01", "node02", "node03", "node04"}));
  EXPECT_EQ(plan->nodes[2].first_rank, 8);
  EXPECT_EQ(plan->nodes[2].leaf, Guid{0x1002});
  EXPECT_EQ(plan->nodes[2].groups, (std::vector<int>{0}));
  EXPECT_EQ(plan->nodes[3].local[3].gpu, "0000:04:00.0");
  EXPECT_EQ(plan->metrics.ring_leaf_crossings, 2);
  EXPECT_EQ(plan->metrics.ring_leaf_crossings_lower_bound, 2);
  EXPECT_EQ(plan->fabric, "known");
}

TEST(PlanBuilderTest, ExcludeAuditAndNnodes) {
  Topology t = WithLayouts(testing::TwoLevelTopology(), 2);
  PlanRequest request;
  request.hosts = {"node04", "node03", "node02", "node01"};
  request.exclude = {"node01"};
  request.unhealthy = {{"node02", "audit error link: port down"}};
  Result<Plan> plan = ComputePlan(&t, request);
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(Hosts(*plan), (std::vector<std::string>{"node03", "node04"}));
  ASSERT_EQ(plan->skipped.size(), 2u);
  EXPECT_EQ(plan->skipped[0], (SkippedHost{"node02", "unhealthy: audit error link: port down"}));
  EXPECT_EQ(plan->skipped[1], (SkippedHost{"node01", "excluded (--exclude)"}));
  EXPECT_EQ(plan->metrics.given_order_ring_leaf_crossings, 0);

  request.exclude.clear();
  request.unhealthy.clear();
  request.nnodes = 2;
  Result<Plan> two = ComputePlan(&t, request);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(Hosts(*two), (std::vector<std::string>{"node01", "node02"}));  // one leaf
  EXPECT_EQ(two->idle, (std::vector<std::string>{"node03", "node04"}));      // the spares, named
  Result<Plan> back = ParsePlanJson(FormatPlanJson(*two), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(back->idle, two->idle);
  EXPECT_NE(FormatPlanText(*two, &t).find("idle (not chosen by --nnodes; run's spares): node[03-04]"), std::string::npos);
  request.exclude = {"node04"};
  Result<Plan> excluded = ComputePlan(&t, request);
  ASSERT_TRUE(excluded.ok());
  EXPECT_EQ(excluded->idle, (std::vector<std::string>{"node03"})) << "a skipped host is no spare";
  request.exclude.clear();
  // A usable host off the fabric that --nnodes leaves out is skipped, never idle too.
  Topology with_lonely = t;
  AttachLayout(with_lonely, "lonely", GpuLayout(2));
  request.hosts.push_back("lonely");
  Result<Plan> lonely = ComputePlan(&with_lonely, request);
  ASSERT_TRUE(lonely.ok()) << lonely.error().Message();
  EXPECT_EQ(lonely->skipped, (std::vector<SkippedHost>{{"lonely", "not on the fabric"}}));
  EXPECT_EQ(lonely->idle, (std::vector<std::string>{"node03", "node04"}));
  request.hosts.pop_back();
  request.nnodes = 5;
  Result<Plan> five = ComputePlan(&t, request);
  ASSERT_FALSE(five.ok());
  EXPECT_EQ(five.error().code, ErrorCode::kBadUsage);
}

TEST(PlanBuilderTest, NprocPerNodeRequiredWhenHostsDisagree) {
  Topology t = testing::TwoLevelTopology();
  AttachLayout(t, "node01", GpuLayout(8));
  AttachLayout(t, "node02", GpuLayout(4));
  PlanRequest request;
  request.hosts = {"node01", "node02"};
  Result<Plan> plan = ComputePlan(&t, request);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ErrorCode::kBadUsage);
  EXPECT_NE(plan.error().Message().find("4 GPU(s) on node02, 8 GPU(s) on node01"), std::string::npos) << plan.error().Message();
  request.nproc_per_node = 4;
  Result<Plan> four = ComputePlan(&t, request);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->notes.size(), 1u);  // node01 leaves 4 GPUs idle
  request.hosts = {"node03"};
  Result<Plan> no_layout = ComputePlan(&t, request);
  ASSERT_TRUE(no_layout.ok());
  EXPECT_NE(no_layout->notes.back().find("ranks not bound: node03"), std::string::npos);
}

// Identical machines share computed bindings; different ones must not.
TEST(PlanBuilderTest, HostsWithDifferentLayoutsGetTheirOwnBindings) {
  Topology t = testing::TwoLevelTopology();
  HostLayout small = GpuLayout(2);
  small.numa_nodes[0].cpus = *ParseCpuList("0-7", "t");
  AttachLayout(t, "node01", GpuLayout(2));
  AttachLayout(t, "node02", small);
  AttachLayout(t, "node03", GpuLayout(2));
  PlanRequest request;
  request.hosts = {"node01", "node02", "node03"};
  Result<Plan> plan = ComputePlan(&t, request);
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(FormatCpuList(plan->nodes[0].local[1].cpus), "16-31");
  EXPECT_EQ(FormatCpuList(plan->nodes[1].local[1].cpus), "4-7");
  EXPECT_EQ(FormatCpuList(plan->nodes[2].local[1].cpus), "16-31");
}

TEST(PlanBuilderTest, NoTopologyKeepsGivenOrder) {
  PlanRequest request;
  request.hosts = {"b2", "a10", "a2"};
  request.nproc_per_node = 2;
  Result<Plan> plan = ComputePlan(nullptr, request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Hosts(*plan), request.hosts);
  EXPECT_EQ(plan->fabric, "none");
  EXPECT_EQ(plan->metrics.ring_leaf_crossings, 3);  // nothing known: every pair crosses
  request.nproc_per_node.reset();
  EXPECT_FALSE(ComputePlan(nullptr, request).ok());
  EXPECT_FALSE(ComputePlan(nullptr, PlanRequest{}).ok());
}

TEST(PlanBuilderTest, RailsAreReportedAndJsonRoundTrips) {
  Topology t = WithLayouts(testing::MultiRailTopology(), 2);
  Result<Plan> plan = ComputePlan(&t, {});
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->rails.size(), 2u);
  Result<Plan> back = ParsePlanJson(FormatPlanJson(*plan), "plan.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, *plan);
  std::string text = FormatPlanText(*plan, &t);
  EXPECT_NE(text.find("su1-r0(+1):"), std::string::npos) << text;
  EXPECT_NE(text.find("rail 1 (mlx5_1): su1-r1 su2-r1"), std::string::npos) << text;
}

TEST(PlanBuilderTest, TextShowsTheTree) {
  Topology t = WithLayouts(testing::ThreeLevelTopology(), 1);
  Result<Plan> plan = ComputePlan(&t, {});
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  std::string text = FormatPlanText(*plan, &t);
  EXPECT_NE(text.find("ring leaf crossings: 4 (lower bound 4"), std::string::npos) << text;
  // NCCL's trees link nodes 2 and 4 apart: across leaves in either order.
  EXPECT_NE(text.find("tree leaf crossings: 10 (lower bound 6"), std::string::npos) << text;
  EXPECT_NE(text.find("tree spine_group crossings: 4 (lower bound 2"), std::string::npos) << text;
  EXPECT_NE(text.find("spine group 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("leaf1: gpu01[0] gpu02[1]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("local 0   gpu 0000:01:00.0  numa 0   cpus 0-31"), std::string::npos) << text;
}

}  // namespace
}  // namespace topolaunch
