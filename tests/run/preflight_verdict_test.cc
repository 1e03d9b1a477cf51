#include "run/preflight_verdict.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace topolaunch::run {
namespace {

// A node that can run a CPU job of one rank per node with torchrun.
NodePreflight ReadyNode(const std::string& host, const std::string& boot_id) {
  NodePreflight node;
  PreflightReply reply;
  reply.hostname = host;
  reply.boot_id = boot_id;
  reply.unix_time_ms = 10'000;
  reply.programs = {{"torchrun", "/usr/bin/torchrun"}};
  reply.port_free = true;
  reply.interpreter = "/usr/bin/python3";
  node.reply = reply;
  node.sent_ms = 9'900;
  node.received_ms = 10'100;
  return node;
}

PreflightExpectations CpuJob() {
  PreflightExpectations expect;
  expect.require_gpus = false;
  expect.master_host = "n1";
  expect.master_port = 29500;
  return expect;
}

TEST(JudgeNodes, ReadyNodesHaveNoProblems) {
  std::vector<SessionNode> nodes = {{"n1", 0}, {"n2", 1}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "boot-1"), ReadyNode("n2", "boot-2")};
  std::vector<std::vector<std::string>> problems = JudgeNodes(CpuJob(), nodes, preflight);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_TRUE(problems[0].empty()) << problems[0].front();
  EXPECT_TRUE(problems[1].empty()) << problems[1].front();
  EXPECT_EQ(CountNotReady(problems), 0u);
}

TEST(JudgeNodes, StartFailureIsTheNodesOnlyProblem) {
  std::vector<SessionNode> nodes = {{"n1", 0}, {"n2", 1}};
  NodePreflight failed;
  failed.failure = "connect: Connection refused";
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "boot-1"), failed};
  std::vector<std::vector<std::string>> problems = JudgeNodes(CpuJob(), nodes, preflight);
  EXPECT_TRUE(problems[0].empty());
  EXPECT_EQ(problems[1], (std::vector<std::string>{"connect: Connection refused"}));
  EXPECT_EQ(CountNotReady(problems), 1u);
}

TEST(JudgeNodes, OneMachineUnderTwoNamesIsNotReadyTheSecondTime) {
  std::vector<SessionNode> nodes = {{"n1", 0}, {"10.0.0.1", 1}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "boot-1"), ReadyNode("n1", "boot-1")};
  std::vector<std::vector<std::string>> problems = JudgeNodes(CpuJob(), nodes, preflight);
  EXPECT_TRUE(problems[0].empty());
  ASSERT_EQ(problems[1].size(), 1u);
  EXPECT_NE(problems[1][0].find("n1"), std::string::npos) << problems[1][0];
}

TEST(JudgeNodes, AMissingProgramIsAProblem) {
  std::vector<SessionNode> nodes = {{"n1", 0}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "boot-1")};
  preflight[0].reply->programs = {{"torchrun", ""}};
  std::vector<std::vector<std::string>> problems = JudgeNodes(CpuJob(), nodes, preflight);
  ASSERT_EQ(problems[0].size(), 1u);
  EXPECT_NE(problems[0][0].find("torchrun"), std::string::npos) << problems[0][0];
}

TEST(FillKnownGpuCounts, OnlyNodesNotAskedForTheirLayout) {
  Topology topology;
  TopologyHost known;
  known.name = "n1";
  known.layout = HostLayout{};
  known.layout->gpus.resize(4);
  topology.hosts.push_back(known);
  std::vector<SessionNode> nodes = {{"n1", 0}, {"n2", 1}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "b1"), ReadyNode("n2", "b2")};
  preflight[1].reply->gpus = 2;
  FillKnownGpuCounts(topology, nodes, preflight);
  EXPECT_EQ(preflight[0].reply->gpus, 4) << "the topology's layout counts";
  EXPECT_EQ(preflight[1].reply->gpus, 2) << "a host the topology does not know keeps its own count";

  preflight[0].reply->layout = HostLayout{};  // the node sent its own layout: its count stands
  preflight[0].reply->gpus = 1;
  FillKnownGpuCounts(topology, nodes, preflight);
  EXPECT_EQ(preflight[0].reply->gpus, 1);
}

TEST(RanksPerNodeFromReplies, OnePerGpuWhenEveryNodeAnswered) {
  std::vector<SessionNode> nodes = {{"n1", 0}, {"n2", 1}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "b1"), ReadyNode("n2", "b2")};
  preflight[0].reply->gpus = 8;
  preflight[1].reply->gpus = 8;
  std::optional<Result<int>> ranks = RanksPerNodeFromReplies(nodes, preflight);
  ASSERT_TRUE(ranks && ranks->ok());
  EXPECT_EQ(**ranks, 8);

  preflight[1].failure = "timed out";
  EXPECT_FALSE(RanksPerNodeFromReplies(nodes, preflight)) << "a node without a reply leaves it to JudgeNodes";
}

TEST(InterpreterNote, GroupsNodesByInterpreter) {
  std::vector<SessionNode> nodes = {{"n1", 0}, {"n2", 1}, {"n3", 2}};
  std::vector<NodePreflight> preflight = {ReadyNode("n1", "b1"), ReadyNode("n2", "b2"), ReadyNode("n3", "b3")};
  preflight[1].reply->interpreter = "/opt/venv/bin/python3";
  EXPECT_EQ(InterpreterNote(nodes, preflight),
            "python: the one torchrun runs under (its #! line): /opt/venv/bin/python3 (n2), /usr/bin/python3 (n[1,3]); "
            "--python chooses another");
}

}  // namespace
}  // namespace topolaunch::run
