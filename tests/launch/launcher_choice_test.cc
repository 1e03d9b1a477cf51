// ChooseLauncher: what `run --launcher` picks from the facts, and why.
#include "launch/launcher_choice.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

LauncherFacts InJob(std::string requested = "auto", std::string source = "SLURM_JOB_NODELIST") {
  return {std::move(requested), "4711", "/usr/bin/srun", std::move(source)};
}

LauncherFacts Outside(std::string requested = "auto", std::string source = "") {
  return {std::move(requested), "", "/usr/bin/srun", std::move(source)};
}

LauncherKind Kind(const LauncherFacts& facts) {
  Result<LauncherChoice> choice = ChooseLauncher(facts);
  EXPECT_TRUE(choice.ok()) << choice.error().Message();
  return choice.ok() ? choice->kind : LauncherKind::kLocal;
}

std::string Refusal(const LauncherFacts& facts) {
  Result<LauncherChoice> choice = ChooseLauncher(facts);
  EXPECT_FALSE(choice.ok());
  if (choice.ok()) return "";
  EXPECT_EQ(choice.error().code, ErrorCode::kBadUsage);
  return choice.error().Message();
}

TEST(ChooseLauncher, AutoPicksSrunInsideAnAllocationAndSaysWhy) {
  Result<LauncherChoice> choice = ChooseLauncher(InJob());
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->kind, LauncherKind::kSrun);
  EXPECT_NE(choice->why.find("Slurm job 4711"), std::string::npos) << choice->why;
  EXPECT_NE(choice->why.find("/usr/bin/srun"), std::string::npos) << choice->why;
  EXPECT_NE(choice->why.find("--launcher ssh"), std::string::npos) << choice->why;
  EXPECT_EQ(Kind(InJob("auto", "--hosts")), LauncherKind::kSrun);  // hosts of the allocation, by name
}

TEST(ChooseLauncher, AutoPicksSshOutsideAnAllocationOrWithoutSrun) {
  EXPECT_EQ(Kind(Outside("auto", "--hosts")), LauncherKind::kSsh);
  EXPECT_EQ(Kind(Outside("auto", "--hostfile")), LauncherKind::kSsh);
  LauncherFacts no_srun = InJob();
  no_srun.srun_path = "";
  Result<LauncherChoice> choice = ChooseLauncher(no_srun);
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->kind, LauncherKind::kSsh);
  EXPECT_NE(choice->why.find("srun is not on PATH"), std::string::npos) << choice->why;
}

TEST(ChooseLauncher, AutoRunsHereWithNoHostsAndNoAllocation) {
  EXPECT_EQ(Kind(Outside()), LauncherKind::kLocal);
  LauncherFacts no_srun = Outside();
  no_srun.srun_path = "";
  EXPECT_EQ(Kind(no_srun), LauncherKind::kLocal);
}

TEST(ChooseLauncher, ForcedChoicesWin) {
  EXPECT_EQ(Kind(InJob("ssh")), LauncherKind::kSsh);
  EXPECT_EQ(Kind(InJob("local")), LauncherKind::kLocal);  // the allocation's list is not "hosts given"
  EXPECT_EQ(Kind(InJob("srun", "--hosts")), LauncherKind::kSrun);
  EXPECT_EQ(Kind(Outside("ssh", "--hosts")), LauncherKind::kSsh);
}

TEST(ChooseLauncher, RefusesWhatCannotWork) {
  EXPECT_NE(Refusal(Outside("srun", "--hosts")).find("SLURM_JOB_ID is not set"), std::string::npos);
  LauncherFacts no_srun = InJob("srun");
  no_srun.srun_path = "";
  EXPECT_NE(Refusal(no_srun).find("srun is not on PATH"), std::string::npos);
  EXPECT_NE(Refusal(Outside("ssh")).find("ssh needs hosts"), std::string::npos);
  EXPECT_NE(Refusal(Outside("local", "--hostfile")).find("drop --hostfile"), std::string::npos);
  EXPECT_NE(Refusal(Outside("pbs")).find("'pbs' is not one of"), std::string::npos);
}

// `srun -N4 topolaunch run ...`: four launches of the whole job. Refused
// whatever the launcher; one task (the batch step, salloc's interactive
// step, `srun -N1 -n1`) is one launch.
TEST(ChooseLauncher, RunAsOneOfSeveralTasksOfAStepIsRefused) {
  for (const char* requested : {"auto", "srun", "ssh"}) {
    LauncherFacts nested = InJob(requested);
    nested.step_tasks = 4;
    Result<LauncherChoice> choice = ChooseLauncher(nested);
    ASSERT_FALSE(choice.ok()) << requested;
    EXPECT_EQ(choice.error().code, ErrorCode::kBadUsage);
    EXPECT_NE(choice.error().Message().find("one of 4 tasks of a Slurm step"), std::string::npos) << choice.error().Message();
    EXPECT_NE(choice.error().Message().find("from the batch script or the salloc shell"), std::string::npos);
  }
  LauncherFacts single = InJob();
  single.step_tasks = 1;
  EXPECT_EQ(Kind(single), LauncherKind::kSrun);
}

}  // namespace
}  // namespace topolaunch
