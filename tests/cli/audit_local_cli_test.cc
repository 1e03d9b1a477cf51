// `topolaunch audit` without a fabric: --local on a fake sysfs tree, a
// synthetic hwloc XML with a degraded GPU link, saved dumps, bad input.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/audit_test_util.h"
#include "cli/cli_test_util.h"
#include "audit/audit_fake_sysfs.h"
#include "support/fabric_generator.h"

namespace topolaunch::testing {
namespace {

using nlohmann::json;

TEST(AuditLocalCli, HealthyNodeExitsZeroAndPrologSaysOk) {
  FakeSysfs fs;
  HealthyNode(fs);
  ProcessResult r = RunTopolaunch({"audit", "--local", "--sysfs-root", fs.root(), "--expect-gpus", "4", "--prolog"});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "ok\n");
}

TEST(AuditLocalCli, DegradedNodeExitsOneWithADrainReason) {
  FakeSysfs fs;
  HealthyNode(fs);
  fs.IbPort("mlx5_3", 1, "3: ARMED", "5: LinkUp", "200 Gb/sec (4X HDR)");
  ProcessResult r = RunTopolaunch({"audit", "--local", "--sysfs-root", fs.root(), "--expect-gpus", "8", "--prolog"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.out.find("topolaunch audit: 2 error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu_count: 4 GPUs found, 8 expected"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mlx5_3 port 1 is physically up but Armed"), std::string::npos) << r.out;
  ProcessResult only_critical =
      RunTopolaunch({"audit", "--local", "--sysfs-root", fs.root(), "--expect-gpus", "8", "--fail-on", "critical"});
  EXPECT_EQ(only_critical.exit_code, 0) << only_critical.Describe();
}

TEST(AuditLocalCli, NoHcaExitsThree) {
  FakeSysfs fs;
  fs.Numa(0, "0-3", 1024);
  ProcessResult r = RunTopolaunch({"audit", "--local", "--sysfs-root", fs.root(), "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["checks_failed_to_run"].size(), 1u);
}

// A synthetic machine from lstopo, with four A100s added below a host
// bridge; the third negotiated half the bandwidth of its peers.
std::string XmlWithGpus(const TempDir& dir) {
  ProcessSpec spec;
  spec.argv = {"lstopo", "--input", "pack:2 numa:1 core:2 pu:1", "--of", "xml", "-"};
  ProcessResult lstopo = RunProcess(spec);
  EXPECT_EQ(lstopo.exit_code, 0) << lstopo.Describe();
  std::string xml = lstopo.out;
  std::string io = "    <object type=\"Bridge\" gp_index=\"900\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-0f]\">\n";
  const char* speeds[] = {"31.507692", "31.507692", "15.753846", "31.507692"};
  for (int i = 0; i < 4; ++i)
    io += fmt::format("      <object type=\"PCIDev\" gp_index=\"{}\" pci_busid=\"0000:{:02x}:00.0\" pci_type=\"0302 [10de:20b0] "
                      "[10de:144e] a1\" pci_link_speed=\"{}\">\n        <info name=\"PCIVendor\" value=\"NVIDIA Corporation\"/>\n"
                      "        <info name=\"PCIDevice\" value=\"GA100 [A100 SXM4 40GB]\"/>\n      </object>\n",
                      901 + i, 7 + i, speeds[i]);
  io += "    </object>\n";
  size_t end = xml.rfind("\n  </object>\n");  // the Machine's end: the bridge becomes its I/O child
  EXPECT_NE(end, std::string::npos);
  if (end != std::string::npos) xml.insert(end + 1, io);
  std::string path = dir.File("gpu01.xml");
  std::ofstream(path) << xml;
  return path;
}

TEST(AuditLocalCli, HwlocXmlWithADegradedGpuLink) {
  TempDir dir;
  std::string xml = XmlWithGpus(dir);
  ProcessResult r = RunTopolaunch({"audit", "--hwloc-xml", xml, "--expect-gpus", "4", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.Describe() << r.out;
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["findings"].size(), 1u) << r.out;
  EXPECT_EQ(doc["findings"][0]["check"], "gpu_pcie_link");
  EXPECT_NE(doc["findings"][0]["message"].get<std::string>().find("0000:09:00.0"), std::string::npos) << r.out;
}

TEST(AuditLocalCli, BadInputExitsTwoNamingTheLine) {
  TempDir dir;
  std::string thresholds = dir.File("thresholds");
  std::ofstream(thresholds) << "# ok\nSymbolErrorCounter=x\n";
  ProcessResult r = RunTopolaunch({"audit", "--local", "--sysfs-root", dir.path(), "--thresholds", thresholds});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find(thresholds + ":2"), std::string::npos) << r.err;
  ProcessResult nothing = RunTopolaunch({"audit"});
  EXPECT_EQ(nothing.exit_code, 2) << nothing.Describe();
  ProcessResult interval = RunTopolaunch({"audit", "--local", "--interval", "9", "--timeout", "5"});
  EXPECT_EQ(interval.exit_code, 2) << interval.Describe();
  ProcessResult missing = RunTopolaunch({"audit", "--fabric", dir.File("absent.ibnet")});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
}

TEST(AuditLocalCli, SavedDumpAndTopologyGiveTheSameFindings) {
  TempDir dir;
  FatTreeSpec spec;
  std::string net = WriteNet(dir, "f.net", SetHostLinkToken(TwoLevelFatTree(spec).netfile, "node02 mlx5_0", "1xHDR"));
  ProcessResult dump = RunTopolaunch({"audit", "--fabric", net, "--json"});
  ASSERT_EQ(dump.exit_code, 1) << dump.Describe();
  ProcessResult disc = RunTopolaunch({"discover", "--fabric", net, "-o", dir.File("t.json")});
  ASSERT_EQ(disc.exit_code, 0) << disc.Describe();
  ProcessResult topo = RunTopolaunch({"audit", "--topology", dir.File("t.json"), "--json"});
  ASSERT_EQ(topo.exit_code, 1) << topo.Describe();
  EXPECT_EQ(SeriousFindings(json::parse(dump.out)), SeriousFindings(json::parse(topo.out)));
  EXPECT_EQ(SeriousFindings(json::parse(dump.out)),
            (std::set<FindingKey>{{"error", "link_width", "node02", "leaf01"}}));
}

}  // namespace
}  // namespace topolaunch::testing
