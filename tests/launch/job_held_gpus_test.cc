#include "launch/job_held_gpus.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace topolaunch {
namespace {

// `scontrol -d -o show job` of an exclusive job on Slurm 22.05 (the test
// cluster's), shortened: the node groups come after the job's fields.
constexpr const char* kExclusiveJob =
    "JobId=7 JobName=interactive UserId=root(0) GroupId=root(0) Priority=4294901754 JobState=RUNNING "
    "NodeList=node[1-3] BatchHost=head NumNodes=3 NumCPUs=6 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=6,node=3,billing=6,gres/gpu=12 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
    "JOB_GRES=gpu:12 Nodes=node[1-3] CPU_IDs=0-1 Mem=0 GRES=gpu:4(IDX:0-3) MinCPUsNode=1 MinMemoryNode=0 "
    "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null) "
    "Command=(null) WorkDir=/tmp Power=\n";

TEST(ParseHeldGpus, EveryNodeGroupWithItsGpusSummed) {
  Result<JobGpus> held = ParseHeldGpus(kExclusiveJob);
  ASSERT_TRUE(held.ok()) << held.error().Message();
  ASSERT_EQ(held->nodes.size(), 1u);
  EXPECT_EQ(held->nodes[0].nodes, "node[1-3]");
  EXPECT_EQ(held->nodes[0].gpus, 4);
  EXPECT_FALSE(held->asked);
  // Two types on one node, an IDX list with its own comma, a GRES that is
  // not a GPU, counted GRES without files, and scontrol's multi-line form.
  held = ParseHeldGpus(
      "JobId=9\n   Nodes=gpu01 CPU_IDs=0-63 Mem=0 GRES=gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:3),nic:1(IDX:0)\n"
      "   Nodes=gpu[02-03] CPU_IDs=0-63 Mem=0 GRES=gpu:3(IDX:0,2-3)\n   Nodes=gpu04 CPU_IDs=0 Mem=0 GRES=gpu(CNT:8)\n"
      "   Nodes=cpu01 CPU_IDs=0 Mem=0 GRES=\n");
  ASSERT_TRUE(held.ok()) << held.error().Message();
  ASSERT_EQ(held->nodes.size(), 4u);
  EXPECT_EQ(held->nodes[0].gpus, 3);
  EXPECT_EQ(held->nodes[1].nodes, "gpu[02-03]");
  EXPECT_EQ(held->nodes[1].gpus, 3);
  EXPECT_EQ(held->nodes[2].gpus, 8);
  EXPECT_EQ(held->nodes[3].gpus, 0);
  // A job that holds nothing has no groups (or groups without GRES).
  held = ParseHeldGpus("JobId=3 JobName=x NumNodes=2 Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=\n");
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(StepGpusFromHeld(*held));
  held = ParseHeldGpus("JobId=3 JobName=x NumNodes=2\n");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->nodes.empty());
}

// A job that asked for GPUs (--gpus, --gpus-per-node, --gres, per task)
// has its request copied to a step that asks for none, which is all it
// holds: `--gpus=8` spread 6 and 2 gives the step all eight, where gpu:2 a
// node would give it four. Only GPUs held unasked are asked for.
TEST(ParseHeldGpus, AJobThatAskedForGpusIsLeftToSlurm) {
  for (const char* field : {"TresPerJob=gres:gpu:8", "TresPerNode=gres:gpu:4", "TresPerTask=cpu:2,gres:gpu:1",
                            "TresPerSocket=gres:gpu:a100:2"}) {
    Result<JobGpus> held = ParseHeldGpus(fmt::format("JobId=5 {} Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:6(IDX:0-5) "
                                                     "Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)\n", field));
    ASSERT_TRUE(held.ok()) << held.error().Message();
    EXPECT_TRUE(held->asked) << field;
    EXPECT_FALSE(StepGpusFromHeld(*held)) << field;
  }
  Result<JobGpus> held = ParseHeldGpus("JobId=5 TresPerNode=gres:nic:1 Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:6(IDX:0-5)\n");
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held->asked) << "a request for another GRES";
  EXPECT_TRUE(StepGpusFromHeld(*held));
}

TEST(ParseHeldGpus, AnEntryThatIsNotScontrolsFormIsNamed) {
  for (const char* bad : {"Nodes=n1 GRES=gpu:x(IDX:0)", "Nodes=n1 GRES=gpu:4", "Nodes=n1 GRES=gpu(IDX:0-3)",
                          "Nodes=n1 GRES=gpu:4(IDX:0-3", "Nodes=n1 GRES=gpu:99999999999(IDX:0)"}) {
    Result<JobGpus> held = ParseHeldGpus(bad);
    ASSERT_FALSE(held.ok()) << bad;
    EXPECT_NE(held.error().Message().find("nodes n1: GRES entry"), std::string::npos) << held.error().Message();
  }
}

// One step covers every node, so it asks for the fewest any node holds; a
// node holding none means the step can ask for none.
TEST(StepGpusFromHeld, TheFewestOfAnyNodeAndWhy) {
  std::optional<StepGpus> step = StepGpusFromHeld({{{"node[1-3]", 4}}});
  ASSERT_TRUE(step);
  EXPECT_EQ(step->option, "--gres=gpu:4");
  EXPECT_NE(step->reason.find("--exclusive"), std::string::npos) << step->reason;
  step = StepGpusFromHeld({{{"a", 8}, {"b", 2}, {"c", 4}}});
  ASSERT_TRUE(step);
  EXPECT_EQ(step->option, "--gres=gpu:2");
  EXPECT_EQ(step->fewest, 2);
  EXPECT_EQ(step->most, 8);
  EXPECT_NE(StepNote({}, step).find("the nodes hold 2 to 8 of the job's GPUs"), std::string::npos) << StepNote({}, step);
  EXPECT_FALSE(StepGpusFromHeld({{{"a", 8}, {"cpu1", 0}}}));
  EXPECT_FALSE(StepGpusFromHeld({}));
  EXPECT_FALSE(StepGpusFromHeld({{{"a", 8}}, true}));
}

}  // namespace
}  // namespace topolaunch
