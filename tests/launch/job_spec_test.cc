#include "launch/job_spec.h"

#include <gtest/gtest.h>

#include "launch/binding_spec.h"

namespace topolaunch {
namespace {

Plan TwoNodePlan() {
  Plan plan;
  plan.nproc_per_node = 2;
  plan.world_size = 4;
  plan.nodes.resize(2);
  plan.nodes[0].host = "node7", plan.nodes[0].node_rank = 0, plan.nodes[0].first_rank = 0;
  plan.nodes[1].host = "node3", plan.nodes[1].node_rank = 1, plan.nodes[1].first_rank = 2;
  plan.nodes[1].local.resize(2);
  plan.nodes[1].local[0].local_rank = 0, plan.nodes[1].local[0].numa = 0, plan.nodes[1].local[0].cpus = {0, 1};
  plan.nodes[1].local[1].local_rank = 1, plan.nodes[1].local[1].numa = 1, plan.nodes[1].local[1].cpus = {2, 3};
  return plan;
}

TEST(JobSpecTest, TorchrunArgvUsesStaticRendezvousAndBindsWorkers) {
  JobSpec spec;
  spec.torchrun = {"/usr/bin/torchrun", "--redirects", "9:0", "--tee", "9:0"};
  spec.python = "/usr/bin/python3";
  spec.topolaunch = "/opt/topolaunch/bin/topolaunch";
  spec.script = "train.py";
  spec.script_args = {"--lr", "3e-4", "a b", "", "$HOME;'\"\n"};
  spec.master_port = 29600;
  Plan plan = TwoNodePlan();
  std::vector<std::string> expected = {"/usr/bin/torchrun", "--redirects", "9:0", "--tee", "9:0",
                                       "--nnodes=2", "--nproc_per_node=2", "--node_rank=1", "--master_addr=node7",
                                       "--master_port=29600", "--rdzv_backend=static", "--no_python",
                                       "/opt/topolaunch/bin/topolaunch", "bind", "--", "/usr/bin/python3", "train.py",
                                       "--lr", "3e-4", "a b", "", "$HOME;'\"\n"};
  EXPECT_EQ(TorchrunArgv(spec, plan, plan.nodes[1]), expected);
}

TEST(JobSpecTest, PlanTorchrunLinesAreEachNodesRendezvousInNodeRankOrder) {
  EXPECT_EQ(FormatPlanTorchrunLines(TwoNodePlan(), 29601),
            "node7\t'torchrun' '--nnodes=2' '--nproc_per_node=2' '--node_rank=0' '--master_addr=node7' "
            "'--master_port=29601' '--rdzv_backend=static'\n"
            "node3\t'torchrun' '--nnodes=2' '--nproc_per_node=2' '--node_rank=1' '--master_addr=node7' "
            "'--master_port=29601' '--rdzv_backend=static'\n");
  EXPECT_EQ(FormatPlanTorchrunLines(Plan{}, 29500), "");
}

TEST(JobSpecTest, MasterAddressIsTheFirstNodeUnlessGiven) {
  JobSpec spec;
  Plan plan = TwoNodePlan();
  EXPECT_EQ(MasterAddress(spec, plan), "node7");
  spec.master_addr = "10.0.0.7";
  EXPECT_EQ(MasterAddress(spec, plan), "10.0.0.7");
}

TEST(JobSpecTest, LaunchMessageCarriesEnvBindingsCwdAndGrace) {
  JobSpec spec;
  spec.script = "t.py";
  spec.cwd = "/work";
  spec.grace = std::chrono::milliseconds(1500);
  Plan plan = TwoNodePlan();
  LaunchMessage bound = NodeLaunchMessage(spec, plan, plan.nodes[1], {{"NCCL_IB_HCA", "mlx5_0"}});
  ASSERT_EQ(bound.command.env.size(), 2u);
  EXPECT_EQ(bound.command.env[0], (std::pair<std::string, std::string>{"NCCL_IB_HCA", "mlx5_0"}));
  EXPECT_EQ(bound.command.env[1].first, kBindingsEnvName);
  EXPECT_EQ(bound.command.env[1].second, FormatBindingSpec(plan.nodes[1].local));
  EXPECT_EQ(bound.command.cwd, "/work");
  EXPECT_EQ(bound.grace, std::chrono::milliseconds(1500));
  EXPECT_TRUE(bound.rank_output) << "each rank's lines on its own connection, labelled";
  // Node 0 has no binding: no TOPOLAUNCH_BINDINGS at all.
  LaunchMessage unbound = NodeLaunchMessage(spec, plan, plan.nodes[0], {});
  EXPECT_TRUE(unbound.command.env.empty());
}

TEST(JobSpecTest, SplitCommandWordsLikeAShell) {
  struct Case {
    std::string text;
    std::vector<std::string> words;
  } cases[] = {
      {"torchrun", {"torchrun"}},
      {"  torchrun   --redirects 9:0\t--tee 9:0 ", {"torchrun", "--redirects", "9:0", "--tee", "9:0"}},
      {"'/opt/my venv/bin/torchrun' --x", {"/opt/my venv/bin/torchrun", "--x"}},
      {R"("a \"b\" \$c" d\ e)", {R"(a "b" $c)", "d e"}},
      {"a'b'\"c\"", {"abc"}},
      {"x ''", {"x", ""}},
  };
  for (const Case& c : cases) {
    Result<std::vector<std::string>> words = SplitCommandWords(c.text, "--torchrun");
    ASSERT_TRUE(words.ok()) << c.text;
    EXPECT_EQ(*words, c.words) << c.text;
  }
}

TEST(JobSpecTest, SplitCommandWordsRefusesUnterminatedQuotesAndEmpty) {
  for (std::string text : {"torchrun 'x", "\"", "", "   "}) {
    Result<std::vector<std::string>> words = SplitCommandWords(text, "--torchrun");
    ASSERT_FALSE(words.ok()) << text;
    EXPECT_EQ(words.error().code, ErrorCode::kBadUsage);
    EXPECT_NE(words.error().Message().find("--torchrun"), std::string::npos);
  }
}

}  // namespace
}  // namespace topolaunch
