// templates/slurm/prolog-audit.sh against a real slurmctld: a sick node is
// drained with the audit's own one-line reason, a healthy one is left alone.
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "discover/audit_fake_sysfs.h"
#include "support/slurm_harness.h"

namespace topolaunch::testing {
namespace {

ProcessResult RunProlog(const SlurmController& slurm, const std::string& node, const FakeSysfs& sysfs) {
  ProcessSpec spec;
  spec.argv = {"bash", std::string(TOPOLAUNCH_SOURCE_DIR) + "/templates/slurm/prolog-audit.sh"};
  spec.env = {{"TOPOLAUNCH", TopolaunchBinary()},
              {"SLURMD_NODENAME", node},
              {"SLURM_CONF", slurm.conf_path()},
              {"TOPOLAUNCH_EXPECT_GPUS", "4"},
              {"TOPOLAUNCH_AUDIT_ARGS", "--sysfs-root " + sysfs.root()}};
  spec.timeout = std::chrono::seconds(60);
  return RunProcess(spec);
}

std::string NodeState(const SlurmController& slurm, const std::string& node) {
  return slurm.RunScontrol({"show", "node", node}).out;
}

TEST(PrologTemplate, DrainsASickNodeWithTheAuditReasonAndLeavesAHealthyOneAlone) {
  if (!SlurmController::Available()) GTEST_SKIP() << "slurmctld/scontrol not installed";
  Result<std::unique_ptr<SlurmController>> slurm = SlurmController::Start("n[1-2]", "SwitchName=s1 Nodes=n[1-2]\n");
  ASSERT_TRUE(slurm.ok()) << slurm.error().Message();

  FakeSysfs healthy;
  HealthyNode(healthy);
  ProcessResult ok = RunProlog(**slurm, "n1", healthy);
  EXPECT_EQ(ok.exit_code, 0) << ok.Describe();
  EXPECT_EQ(NodeState(**slurm, "n1").find("DRAIN"), std::string::npos) << NodeState(**slurm, "n1");

  // The healthy node, but its fourth GPU negotiated x8 of its x16.
  FakeSysfs sick;
  for (int i = 0; i < 4; ++i) sick.IbPort("mlx5_" + std::to_string(i), 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)");
  sick.Gpu("0000:00:01.0", "0000:07:00.0", "32.0", 16, "32.0", 16, "32.0");
  sick.Gpu("0000:00:02.0", "0000:08:00.0", "32.0", 16, "32.0", 16, "32.0");
  sick.Gpu("0000:00:03.0", "0000:09:00.0", "32.0", 16, "32.0", 16, "32.0");
  sick.Gpu("0000:00:04.0", "0000:0a:00.0", "32.0", 8, "32.0", 16, "32.0");
  sick.Numa(0, "0-15", 131072);
  sick.Numa(1, "16-31", 131072);
  ProcessResult bad = RunProlog(**slurm, "n2", sick);
  EXPECT_EQ(bad.exit_code, 1) << bad.Describe();
  std::string state = NodeState(**slurm, "n2");
  EXPECT_NE(state.find("DRAIN"), std::string::npos) << state;
  EXPECT_NE(state.find("0a:00.0"), std::string::npos) << "the reason should name the GPU:\n" << state;
}

}  // namespace
}  // namespace topolaunch::testing
