// Node checks from a fake sysfs tree read by the real reader: HCA ports,
// GPU PCIe links against device and slot, GPU count, NUMA memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli/audit_test_util.h"
#include "audit/audit_node_checks.h"
#include "audit/audit_sysfs_reader.h"
#include "audit/audit_fake_sysfs.h"

namespace topolaunch::testing {

namespace {

std::set<FindingKey> Judge(const FakeSysfs& fs, std::optional<int> expect_gpus, AuditReport* out = nullptr) {
  NodeFacts facts = ReadNodeFacts(fs.root(), "gpu01");
  NodeCheckOptions options;
  options.expect_gpus = expect_gpus;
  AuditReport report;
  CheckNode(facts, options, report);
  std::set<FindingKey> keys;
  for (const Finding& f : report.findings)
    if (f.severity >= Severity::kWarning) keys.insert({std::string(SeverityName(f.severity)), f.check, f.host, f.message});
  if (out) *out = report;
  return keys;
}

TEST(AuditNodeChecks, ReaderParsesSysfs) {
  FakeSysfs fs;
  HealthyNode(fs);
  NodeFacts facts = ReadNodeFacts(fs.root(), "gpu01");
  ASSERT_EQ(facts.ib_ports.size(), 4u);
  EXPECT_EQ(facts.ib_ports[0].state, "Active");
  EXPECT_EQ(facts.ib_ports[0].phys_state, "LinkUp");
  EXPECT_EQ(facts.ib_ports[0].width, "4X");
  EXPECT_EQ(facts.ib_ports[0].speed, "HDR");
  EXPECT_EQ(facts.ib_ports[0].counters.at("SymbolErrorCounter"), 0u);
  ASSERT_EQ(facts.gpus.size(), 4u);
  EXPECT_EQ(facts.gpus[2].bus_id, "0000:09:00.0");
  EXPECT_DOUBLE_EQ(facts.gpus[2].slot_max_gts, 16.0);
  EXPECT_EQ(facts.gpus[2].max_width, 16);
  ASSERT_EQ(facts.numa.size(), 2u);
  EXPECT_EQ(facts.numa[1].memory_bytes, 131072ULL * 1024);
}

TEST(AuditNodeChecks, HealthyNodeHasNoFindings) {
  FakeSysfs fs;
  HealthyNode(fs);
  AuditReport report;
  EXPECT_TRUE(Judge(fs, 4, &report).empty());
  EXPECT_TRUE(report.checks_failed_to_run.empty());
}

TEST(AuditNodeChecks, EachInjectedFaultIsReported) {
  FakeSysfs fs;
  fs.IbPort("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)");
  fs.IbPort("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", 500);
  fs.IbPort("mlx5_2", 1, "2: INIT", "5: LinkUp", "200 Gb/sec (4X HDR)");
  fs.IbPort("mlx5_3", 1, "4: ACTIVE", "5: LinkUp", "50 Gb/sec (1X HDR)");
  fs.Gpu("0000:00:01.0", "0000:07:00.0", "16.0", 16, "32.0", 16, "32.0");  // Gen5 at Gen4
  fs.Gpu("0000:00:02.0", "0000:08:00.0", "32.0", 8, "32.0", 16, "32.0");   // x8
  fs.Gpu("0000:00:03.0", "0000:09:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Numa(0, "0-15", 131072);
  fs.Numa(1, "16-31", 0);
  fs.Numa(2, "", 0);  // a CPU-less, memory-less node (GH200-style) is normal
  std::set<FindingKey> found = Judge(fs, 4);
  std::set<std::string> checks;
  for (const FindingKey& k : found) checks.insert(std::get<1>(k) + ":" + std::get<0>(k));
  EXPECT_EQ(checks, (std::set<std::string>{"port_counter:error", "port_state:error", "link_width:error",
                                           "gpu_pcie_link:error", "gpu_count:error", "numa_memory:warning"}));
  EXPECT_EQ(found.size(), 7u);  // two GPU links
  for (const FindingKey& k : found) EXPECT_EQ(std::get<2>(k), "gpu01");
}

TEST(AuditNodeChecks, IdleNvidiaGpuAtGen1IsOnlyInfo) {
  FakeSysfs fs;
  HealthyNode(fs);
  fs.Gpu("0000:00:05.0", "0000:0b:00.0", "2.5", 16, "32.0", 16, "32.0");
  AuditReport report;
  EXPECT_TRUE(Judge(fs, 5, &report).empty());
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].severity, Severity::kInfo);
}

TEST(AuditNodeChecks, NoHcaIsACheckThatCouldNotRun) {
  FakeSysfs fs;
  fs.Numa(0, "0-3", 1024);
  AuditReport report;
  Judge(fs, std::nullopt, &report);
  ASSERT_EQ(report.checks_failed_to_run.size(), 1u);
  EXPECT_EQ(AuditExitStatus(report, Severity::kError), 3);
}

TEST(AuditNodeChecks, IntervalJudgesTheIncrease) {
  FakeSysfs fs;
  HealthyNode(fs);
  fs.IbPort("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", 5000);
  NodeFacts before = ReadNodeFacts(fs.root(), "gpu01");
  NodeCheckOptions options;
  options.interval_s = 1;
  options.before = &before;
  AuditReport quiet;
  CheckNode(before, options, quiet);  // no increase: old errors only
  EXPECT_TRUE(quiet.findings.empty());
  fs.IbPort("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", 5100);
  AuditReport rising;
  CheckNode(ReadNodeFacts(fs.root(), "gpu01"), options, rising);
  ASSERT_EQ(rising.findings.size(), 1u);
  EXPECT_NE(rising.findings[0].reasons[0].find("rose by 100"), std::string::npos);
}

}  // namespace
}  // namespace topolaunch::testing
