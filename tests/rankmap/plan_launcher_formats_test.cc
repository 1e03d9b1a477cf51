#include "rankmap/plan_launcher_formats.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

// Three nodes in plan order (not name order), two ranks each but the last
// with one binding only.
Plan ThreeNodes() {
  Plan plan;
  plan.nproc_per_node = 2;
  int rank = 0;
  for (const char* host : {"node07", "node02", "node11"}) {
    PlanNode node;
    node.host = host;
    node.node_rank = static_cast<int>(plan.nodes.size());
    node.first_rank = rank;
    for (int local = 0; local < (node.host == "node11" ? 1 : 2); ++local) node.local.push_back({local, "", {}, {}, {}, ""});
    rank += static_cast<int>(node.local.size());
    plan.nodes.push_back(node);
  }
  plan.world_size = rank;
  return plan;
}

TEST(PlanLauncherFormats, HostfileKeepsThePlanOrderAndEachNodesRanks) {
  EXPECT_EQ(FormatPlanHostfile(ThreeNodes()), "node07 slots=2\nnode02 slots=2\nnode11 slots=1\n");
  Plan unbound = ThreeNodes();
  for (PlanNode& node : unbound.nodes) node.local.clear();
  EXPECT_EQ(FormatPlanHostfile(unbound), "node07 slots=2\nnode02 slots=2\nnode11 slots=2\n") << "nproc_per_node when unbound";
}

TEST(PlanLauncherFormats, SlurmHostfileHasALinePerRankInRankOrder) {
  EXPECT_EQ(FormatPlanSlurmHostfile(ThreeNodes()), "node07\nnode07\nnode02\nnode02\nnode11\n");
  EXPECT_EQ(FormatPlanSlurmHostfile(Plan{}), "");
}

TEST(PlanLauncherFormats, RankfileBindsEachRankToItsPuOsIndexes) {
  Plan plan = ThreeNodes();
  plan.nodes[2].local.push_back({1, "", {}, {}, {}, ""});  // node11: both ranks known
  std::vector<std::vector<int>> cpus = {{0, 1, 2, 64, 65, 66}, {3, 4, 5, 67, 68, 69}};
  for (PlanNode& node : plan.nodes)
    for (RankBinding& rank : node.local) rank.cpus = cpus[static_cast<size_t>(rank.local_rank)];
  Result<std::string> rankfile = FormatPlanRankfile(plan);
  ASSERT_TRUE(rankfile.ok()) << rankfile.error().Message();
  EXPECT_EQ(*rankfile,
            "rank 0=node07 slot=0-2,64-66\nrank 1=node07 slot=3-5,67-69\n"
            "rank 2=node02 slot=0-2,64-66\nrank 3=node02 slot=3-5,67-69\n"
            "rank 4=node11 slot=0-2,64-66\nrank 5=node11 slot=3-5,67-69\n");
}

TEST(PlanLauncherFormats, RankfileNamesTheHostsWhoseCpusAreUnknown) {
  Plan plan = ThreeNodes();  // nobody's CPUs are known; node11 also lacks a rank's binding
  plan.nodes[0].local[0].cpus = {0};
  plan.nodes[0].local[1].cpus = {1};
  Result<std::string> rankfile = FormatPlanRankfile(plan);
  ASSERT_FALSE(rankfile.ok());
  EXPECT_EQ(rankfile.error().code, ErrorCode::kBadInput);
  std::string message = rankfile.error().Message();
  EXPECT_NE(message.find("the CPUs of node[02,11] are unknown"), std::string::npos) << message;  // node07 is bound
}

}  // namespace
}  // namespace topolaunch
