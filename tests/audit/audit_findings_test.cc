// The audit report: JSON shape that `plan` reads, the prolog line, exit status.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "audit/audit_findings.h"

namespace topolaunch {
namespace {

AuditReport Sample() {
  AuditReport r;
  r.generated = {"topolaunch 0.1.0", "2026-11-29T08:00:00Z", "live"};
  r.checks_run = {"port_state", "link_width", "port_state"};
  Finding a;
  a.severity = Severity::kWarning;
  a.check = "numa_memory";
  a.host = "node02";
  a.message = "NUMA node 1 has CPUs but no memory";
  Finding b;
  b.severity = Severity::kError;
  b.check = "link_width";
  b.host = "node03";
  b.switch_guid = 0x98039b0300100000;
  b.switch_name = "leaf01";
  b.port = 3;
  b.peer = FindingPeer{"host", 0x98039b0300800020, "node03", "mlx5_0", 1};
  b.message = "link leaf01 port 3 <-> node03 mlx5_0 port 1 runs 1X HDR \"odd\" $(rm -rf /)\nsecond line";
  b.reasons = {"peer majority: 4X"};
  r.findings = {a, b};
  NormalizeReport(r);
  return r;
}

TEST(AuditReport, JsonHasTheFieldsPlanReads) {
  nlohmann::json doc = nlohmann::json::parse(FormatAuditJson(Sample()));
  EXPECT_EQ(doc["schema"], "topolaunch.audit/1");
  EXPECT_EQ(doc["generated"]["fabric_source"], "live");
  EXPECT_EQ(doc["checks_run"], nlohmann::json({"link_width", "port_state"}));
  EXPECT_TRUE(doc["checks_failed_to_run"].is_array());
  ASSERT_EQ(doc["findings"].size(), 2u);
  const nlohmann::json& first = doc["findings"][0];  // most severe first
  EXPECT_EQ(first["severity"], "error");
  EXPECT_EQ(first["host"], "node03");
  EXPECT_EQ(first["switch_guid"], "0x98039b0300100000");
  EXPECT_EQ(first["port"], 3);
  EXPECT_EQ(first["peer"]["device"], "mlx5_0");
  EXPECT_EQ(first["reasons"][0], "peer majority: 4X");
  EXPECT_FALSE(doc["findings"][1].contains("switch_guid"));
}

TEST(AuditReport, PrologLineIsShortSafeAndOneLine) {
  std::string line = FormatAuditProlog(Sample(), 120);
  EXPECT_LE(line.size(), 120u);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('"'), std::string::npos);
  EXPECT_EQ(line.find('$'), std::string::npos);
  EXPECT_EQ(line.rfind("topolaunch audit: 1 error link_width:", 0), 0u) << line;
  AuditReport healthy;
  EXPECT_EQ(FormatAuditProlog(healthy), "ok");
}

TEST(AuditReport, ExitStatusFollowsFailOnAndCouldNotCheck) {
  AuditReport r = Sample();
  EXPECT_EQ(AuditExitStatus(r, Severity::kError), 1);
  EXPECT_EQ(AuditExitStatus(r, Severity::kCritical), 0);
  EXPECT_EQ(AuditExitStatus(r, Severity::kWarning), 1);
  r.checks_failed_to_run.push_back({"port_counter", "no LID"});
  EXPECT_EQ(AuditExitStatus(r, Severity::kCritical), 3);
  EXPECT_NE(FormatAuditProlog(r).find("not checked port_counter"), std::string::npos);
  EXPECT_EQ(AuditExitStatus(AuditReport{}, Severity::kInfo), 0);
}

TEST(AuditReport, TextGroupsBySeverityWithTheExactPort) {
  std::string text = FormatAuditText(Sample());
  size_t error = text.find("error (1):"), warning = text.find("warning (1):");
  ASSERT_NE(error, std::string::npos) << text;
  ASSERT_NE(warning, std::string::npos) << text;
  EXPECT_LT(error, warning);
  EXPECT_NE(text.find("at switch 0x98039b0300100000/leaf01 port 3 ↔ node03 mlx5_0 port 1"), std::string::npos) << text;
}

TEST(AuditReport, ManyAlikeFindingsAreOneEntryUnlessVerbose) {
  AuditReport r;
  for (int i = 0; i < 174; ++i) {
    Finding f;
    f.severity = Severity::kInfo;
    f.check = "unmapped_ca";
    f.message = fmt::format("CA 0x{:016x} \"Mellanox Technologies Aggregation Node\" could not be mapped to a host", i);
    f.reasons = {"SHARP aggregation node (in-network reduction engine, not a host)"};
    r.findings.push_back(f);
  }
  for (const char* host : {"gpu17", "gpu3", "gpu4", "gpu5"}) {
    Finding f;
    f.check = "host_rail_count";
    f.host = host;
    f.message = std::string(host) + " has 3 active HCA ports, the other gpu# hosts have 4";
    f.reasons = {"216 of the 220 hosts named gpu# have 4 active HCA ports"};
    r.findings.push_back(f);
  }
  Finding other = r.findings.back();
  other.host = "gpu9";
  other.message = "gpu9 has 3 active HCA ports, the other gpu# hosts have 4";
  other.reasons = {"a different cause"};
  r.findings.push_back(other);

  std::string text = FormatAuditText(r);
  EXPECT_NE(text.find("info (174):\n  [unmapped_ca] 174 alike, the first: CA 0x0000000000000000"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(--verbose lists all 174)"), std::string::npos) << text;
  EXPECT_NE(text.find("[host_rail_count] 4 alike, the first: gpu17 has 3"), std::string::npos) << text;
  EXPECT_NE(text.find("      hosts: gpu[3-5,17]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  [host_rail_count] gpu9 has 3"), std::string::npos) << text;  // its own cause: shown alone
  EXPECT_EQ(text.find("0x00000000000000ad"), std::string::npos);

  std::string verbose = FormatAuditText(r, true);
  EXPECT_NE(verbose.find("CA 0x00000000000000ad"), std::string::npos);
  EXPECT_EQ(verbose.find("alike"), std::string::npos);
}

TEST(AuditReport, SeverityNamesRoundTrip) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kError, Severity::kCritical})
    EXPECT_EQ(ParseSeverity(SeverityName(s)), s);
  EXPECT_FALSE(ParseSeverity("fatal"));
}

}  // namespace
}  // namespace topolaunch
