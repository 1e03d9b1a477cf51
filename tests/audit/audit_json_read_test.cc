// Reading audit reports back: what FormatAuditJson writes comes back equal,
// and every malformed part is named by its JSON path.
#include "audit/audit_json_read.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

AuditReport Sample() {
  AuditReport r;
  r.generated = {"topolaunch 0.1.0", "2026-12-04T10:00:00Z", "live"};
  r.checks_run = {"link_width", "port_state"};
  r.checks_failed_to_run = {{"port_counter", "no permission"}};
  r.findings = {{Severity::kCritical, "link_width", "node01", 0x1000, "leaf01", 3,
                 FindingPeer{"host", 0x2001, "node01", "mlx5_0", 1}, "1X", {"below 4X", "flapping"}},
                {Severity::kInfo, "sm", "", std::nullopt, "", std::nullopt, std::nullopt, "one SM", {}}};
  return r;
}

TEST(ParseAuditJson, ReadsBackWhatFormatAuditJsonWrote) {
  AuditReport r = Sample();
  Result<AuditReport> back = ParseAuditJson(FormatAuditJson(r), "audit.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, r);
}

TEST(ParseAuditJson, OptionalFieldsMayBeNullOrAbsent) {
  Result<AuditReport> r = ParseAuditJson(
      R"({"schema": "topolaunch.audit/1", "findings": [{"severity": "error", "check": "c", "message": "m",
          "host": null, "port": null, "peer": null, "future_key": 1}]})",
      "a.json");
  ASSERT_TRUE(r.ok()) << r.error().Message();
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].severity, Severity::kError);
  EXPECT_FALSE(r->findings[0].port);
  EXPECT_FALSE(r->findings[0].peer);
}

TEST(ParseAuditJson, NamesEveryBadPartByItsPath) {
  Result<AuditReport> r = ParseAuditJson(
      R"({"schema": "topolaunch.audit/2", "findings": [
          {"severity": "fatal", "check": "c", "message": "m"},
          {"severity": "error", "check": "c"},
          {"severity": "error", "check": "c", "message": "m", "port": 999, "switch_guid": "leaf01"},
          {"severity": "error", "check": "c", "message": "m", "peer": {"kind": "host"}},
          "text"]})",
      "audit.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kBadInput);
  std::string message = r.error().Message();
  for (const char* where : {"$.schema", "$.findings[0].severity", "$.findings[1].message", "$.findings[2].port",
                            "$.findings[2].switch_guid", "$.findings[3].peer.guid", "$.findings[4]"})
    EXPECT_NE(message.find(where), std::string::npos) << where << " in:\n" << message;
  EXPECT_NE(message.find("audit.json"), std::string::npos);
}

TEST(ParseAuditJson, RefusesWhatIsNotAnAuditReport) {
  for (const char* text : {"", "[]", "{\"schema\": \"topolaunch.audit/1\"}", "{\"findings\": 3}", "{"}) {
    Result<AuditReport> r = ParseAuditJson(text, "x.json");
    EXPECT_FALSE(r.ok()) << text;
  }
}

}  // namespace
}  // namespace topolaunch
