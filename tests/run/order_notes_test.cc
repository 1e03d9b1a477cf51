#include "run/order_notes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace topolaunch::run {
namespace {

Plan PlanOf(const std::vector<std::pair<std::string, std::string>>& hosts_and_domains) {
  Plan plan;
  int rank = 0;
  for (const auto& [host, domain] : hosts_and_domains) {
    PlanNode node;
    node.host = host;
    node.node_rank = rank++;
    node.nvlink_domain = domain;
    plan.nodes.push_back(node);
  }
  return plan;
}

TEST(IdleHostNotes, NothingWithoutNnodes) {
  EXPECT_TRUE(IdleHostNotes({"n1", "n2", "n3"}, std::nullopt, 0, PlanOf({{"n1", ""}})).empty());
}

TEST(IdleHostNotes, NamesIdleHostsThenSkippedOnes) {
  Plan order = PlanOf({{"n2", ""}, {"n1", ""}});
  order.skipped.push_back({"n5", "not on the fabric"});
  std::vector<std::string> notes = IdleHostNotes({"n1", "n2", "n3", "n4", "n5"}, 2, 0, order);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "--nnodes 2: 2 host(s) of the pool stay idle: n[3-4]");
  EXPECT_EQ(notes[1], "skipped n5: not on the fabric");
}

TEST(IdleHostNotes, IdleHostsAreSparesWithRestarts) {
  std::vector<std::string> notes = IdleHostNotes({"n1", "n2"}, 1, 3, PlanOf({{"n1", ""}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "--nnodes 1: 1 host(s) of the pool stay idle, spares for --max-restarts 3: n2");
}

TEST(HostsOutsideAllocation, InNodeOrder) {
  std::vector<SessionNode> nodes = {{"c3", 0}, {"c1", 1}, {"x9", 2}, {"x2", 3}};
  EXPECT_EQ(HostsOutsideAllocation({"c1", "c2", "c3"}, nodes), (std::vector<std::string>{"x9", "x2"}));
  EXPECT_TRUE(HostsOutsideAllocation({}, nodes).empty()) << "an unknown allocation refuses nothing";
}

TEST(ReorderedByDomains, ComparesHostByHost) {
  std::vector<SessionNode> nodes = {{"a", 0}, {"b", 1}};
  EXPECT_FALSE(ReorderedByDomains(PlanOf({{"a", ""}, {"b", ""}}), nodes));
  EXPECT_TRUE(ReorderedByDomains(PlanOf({{"b", ""}, {"a", ""}}), nodes));
}

TEST(DomainsOfPlan, RunsOfOneDomainInPlanOrder) {
  Plan plan = PlanOf({{"g1", "nvl0"}, {"g2", "nvl0"}, {"g3", "nvl1"}, {"g9", ""}, {"g4", "nvl1"}});
  EXPECT_EQ(DomainsOfPlan(plan), "nvl0: g[1-2], nvl1: g[3-4]");
  EXPECT_EQ(DomainsOfPlan(PlanOf({{"a", ""}})), "");
}

}  // namespace
}  // namespace topolaunch::run
