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

}  // namespace
}  // namespace topolaunch
