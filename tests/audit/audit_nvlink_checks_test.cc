// NVLink fabric checks on the GB200 tray fixtures: a healthy tray is quiet,
// every fault is named with its GPU, and hosts without fabric info are not
// checked at all.
#include "audit/audit_nvlink_checks.h"

#include <gtest/gtest.h>

#include "audit/audit_node_checks.h"

#include "support/nvlink_racks.h"

namespace topolaunch {
namespace {

using testing::TrayLayout;

AuditReport Judge(const HostLayout& layout) {
  AuditReport report;
  CheckNvlinkFabric(layout, "gb01", report);
  return report;
}

TEST(AuditNvlink, AHealthyTrayHasNoFindings) {
  AuditReport report = Judge(TrayLayout());
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.checks_run, (std::vector<std::string>{"nvlink_fabric_state", "nvlink_clique", "nvlink_fabric_health"}));
}

TEST(AuditNvlink, OneGpuInAnotherCliqueIsAnError) {
  AuditReport report = Judge(TrayLayout("gb200-tray-one-gpu-in-another-clique.layout.json"));
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& f = report.findings[0];
  EXPECT_EQ(f.check, "nvlink_clique");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.host, "gb01");
  EXPECT_NE(f.message.find("GPU 0019:01:00.0 is in clique 8"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("other GPUs in clique 7"), std::string::npos) << f.message;
}

TEST(AuditNvlink, RegistrationInProgressIsAnErrorPerGpu) {
  AuditReport report = Judge(TrayLayout("gb200-tray-fabric-in-progress.layout.json"));
  ASSERT_EQ(report.findings.size(), 4u);
  for (const Finding& f : report.findings) {
    EXPECT_EQ(f.check, "nvlink_fabric_state");
    EXPECT_EQ(f.severity, Severity::kError);
    EXPECT_NE(f.message.find("registration is in_progress, not completed"), std::string::npos) << f.message;
    ASSERT_FALSE(f.reasons.empty());
    EXPECT_NE(f.reasons[0].find("off for a whole job"), std::string::npos);
  }
}

TEST(AuditNvlink, FailedRegistrationMissingInfoAndHealth) {
  HostLayout tray = TrayLayout();
  tray.gpus[0].nvlink_fabric->status = "Insufficient Resources";
  tray.gpus[1].nvlink_fabric.reset();
  tray.gpus[2].nvlink_fabric->health = {"degraded_bandwidth", "route_recovery"};
  AuditReport report = Judge(tray);
  ASSERT_EQ(report.findings.size(), 3u);
  EXPECT_EQ(report.findings[0].check, "nvlink_fabric_state");
  EXPECT_NE(report.findings[0].message.find("0008:01:00.0 failed to register with the NVLink fabric: Insufficient Resources"),
            std::string::npos) << report.findings[0].message;
  EXPECT_EQ(report.findings[1].check, "nvlink_fabric_state");
  EXPECT_NE(report.findings[1].message.find("0009:01:00.0 has no NVLink fabric info while 3 other GPU(s)"), std::string::npos)
      << report.findings[1].message;
  EXPECT_EQ(report.findings[2].check, "nvlink_fabric_health");
  EXPECT_EQ(report.findings[2].severity, Severity::kWarning);
  EXPECT_NE(report.findings[2].message.find("degraded_bandwidth, route_recovery"), std::string::npos);
}

TEST(AuditNvlink, HostsWithoutFabricInfoAreNotChecked) {
  HostLayout hgx = TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  AuditReport report = Judge(hgx);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_TRUE(report.checks_run.empty()) << "nothing to check is not a check that ran";
}

// audit --local: CheckNode judges the GPUs NVML reported with the same checks.
TEST(AuditNvlink, LocalNodeChecksJudgeWhatNvmlReported) {
  NodeFacts facts;
  facts.host = "gb01";
  facts.nvml_gpus = TrayLayout("gb200-tray-fabric-in-progress.layout.json");
  AuditReport report;
  CheckNode(facts, NodeCheckOptions{}, report);
  size_t fabric = 0;
  for (const Finding& f : report.findings) fabric += f.check == "nvlink_fabric_state";
  EXPECT_EQ(fabric, 4u);
}

}  // namespace
}  // namespace topolaunch
