// templates/slurm/prolog-audit.sh against a real slurmctld: a sick node is
// drained with the audit's own one-line reason, a healthy one is left alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_test_util.h"
#include "audit/audit_fake_sysfs.h"
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
  ASSERT_TRUE(SlurmController::Available()) << "slurmctld/scontrol not installed (bash tests/install_deps.sh test)";
  Result<std::unique_ptr<SlurmController>> slurm = SlurmController::Start("n[1-2]", "SwitchName=s1 Nodes=n[1-2]\n");
  ASSERT_TRUE(slurm.ok()) << slurm.error().Message();

  FakeSysfs healthy;
  HealthyNode(healthy);
  ProcessResult ok = RunProlog(**slurm, "n1", healthy);
  EXPECT_EQ(ok.exit_code, 0) << ok.Describe();
  EXPECT_EQ(NodeState(**slurm, "n1").find("DRAIN"), std::string::npos) << NodeState(**slurm, "n1");

  FakeSysfs sick;
  SickNode(sick);
  ProcessResult bad = RunProlog(**slurm, "n2", sick);
  EXPECT_EQ(bad.exit_code, 1) << bad.Describe();
  std::string state = NodeState(**slurm, "n2");
  EXPECT_NE(state.find("DRAIN"), std::string::npos) << state;
  EXPECT_NE(state.find("0a:00.0"), std::string::npos) << "the reason should name the GPU:\n" << state;
}

// The prolog runs as root: a user who plants a symlink where it writes its
// temporary file must not get the target overwritten. The shell execs the
// prolog, so `$$` there is the PID the old predictable name used.
TEST(PrologTemplate, FollowsNoPlantedSymlinkForItsTemporaryFile) {
  TempDir dir;
  std::string victim = dir.File("victim");
  std::ofstream(victim) << "precious\n";
  std::string tmpdir = dir.File("tmp");
  std::filesystem::create_directory(tmpdir);
  ProcessSpec spec;
  spec.argv = {"bash", "-c",
               "echo $$; ln -s \"$VICTIM\" /tmp/topolaunch-audit.$$.err; ln -s \"$VICTIM\" \"$TMPDIR/topolaunch-audit.$$.err\"; "
               "exec bash \"$PROLOG\""};
  // A usage error: topolaunch writes to stderr, the prolog logs it and exits 0 (no scontrol).
  spec.env = {{"TOPOLAUNCH", TopolaunchBinary()}, {"SLURMD_NODENAME", "n1"}, {"VICTIM", victim},
              {"TMPDIR", tmpdir}, {"PROLOG", std::string(TOPOLAUNCH_SOURCE_DIR) + "/templates/slurm/prolog-audit.sh"},
              {"TOPOLAUNCH_AUDIT_ARGS", "--no-such-flag"}};
  spec.timeout = std::chrono::seconds(60);
  ProcessResult result = RunProcess(spec);
  std::string pid = result.out.substr(0, result.out.find('\n'));
  std::error_code ignored;
  std::filesystem::remove("/tmp/topolaunch-audit." + pid + ".err", ignored);
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  std::stringstream content;
  content << std::ifstream(victim).rdbuf();
  EXPECT_EQ(content.str(), "precious\n") << "the prolog wrote through a planted symlink";
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(tmpdir))
    if (!entry.is_symlink()) left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "temporary files left behind: " << left.size();
}

}  // namespace
}  // namespace topolaunch::testing
