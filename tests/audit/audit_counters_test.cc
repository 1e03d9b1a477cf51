// Thresholds in infiniband-diags' error_thresholds format, and judging
// counters against them, once and over an interval.
#include <gtest/gtest.h>

#include "audit/audit_counters.h"

namespace topolaunch {
namespace {

TEST(AuditThresholds, DefaultsAreInfinibandDiagsCommentedValues) {
  CounterThresholds t = DefaultCounterThresholds();
  EXPECT_EQ(t.at("SymbolErrorCounter"), 10u);
  EXPECT_EQ(t.at("PortXmitDiscards"), 100u);
  EXPECT_EQ(t.at("VL15Dropped"), 100u);
  EXPECT_EQ(t.count("PortXmitWait"), 0u);
  EXPECT_EQ(t.size(), 12u);
}

TEST(AuditThresholds, ParsesTheFileFormatOverTheBase) {
  Result<CounterThresholds> t = ParseCounterThresholds(
      "# Define error thresholds here\n\n#SymbolErrorCounter=10\nSymbolErrorCounter=3\r\n  LinkDownedCounter = 0\n"
      "PortXmitWait=1000\n",
      "thr", DefaultCounterThresholds());
  ASSERT_TRUE(t.ok()) << t.error().Message();
  EXPECT_EQ(t->at("SymbolErrorCounter"), 3u);
  EXPECT_EQ(t->at("LinkDownedCounter"), 0u);
  EXPECT_EQ(t->at("PortXmitWait"), 1000u);
  EXPECT_EQ(t->at("PortRcvErrors"), 10u);
}

TEST(AuditThresholds, ReportsEveryBadLineWithFileAndLine) {
  Result<CounterThresholds> t =
      ParseCounterThresholds("SymbolErrorCounter=ten\nBogusCounter=1\nno equals sign\nVL15Dropped=-1\n", "thr.conf", {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kBadInput);
  ASSERT_EQ(t.error().problems.size(), 4u) << t.error().Message();
  EXPECT_EQ(t.error().problems[0].where, "thr.conf:1");
  EXPECT_EQ(t.error().problems[1].where, "thr.conf:2");
  EXPECT_NE(t.error().problems[1].what.find("BogusCounter"), std::string::npos);
  EXPECT_EQ(t.error().problems[2].where, "thr.conf:3");
  EXPECT_EQ(t.error().problems[3].where, "thr.conf:4");
}

struct ReasonCase {
  const char* name;
  CounterValues now;
  std::optional<CounterValues> before;
  size_t reasons;
  const char* fragment;
};

class AuditCounterReasons : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(AuditCounterReasons, JudgesValueOrIncrease) {
  const ReasonCase& c = GetParam();
  std::vector<std::string> r =
      CounterReasons(c.now, c.before ? &*c.before : nullptr, c.before ? 2.0 : 0.0, DefaultCounterThresholds());
  ASSERT_EQ(r.size(), c.reasons) << c.name;
  if (c.reasons > 0) {
    EXPECT_NE(r[0].find(c.fragment), std::string::npos) << r[0];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AuditCounterReasons,
    ::testing::Values(
        ReasonCase{"at threshold", {{"SymbolErrorCounter", 10}}, std::nullopt, 0, ""},
        ReasonCase{"above", {{"SymbolErrorCounter", 11}}, std::nullopt, 1, "SymbolErrorCounter=11 above threshold 10"},
        ReasonCase{"saturated", {{"SymbolErrorCounter", 65535}}, std::nullopt, 1, "saturated"},
        ReasonCase{"old errors, none new", {{"SymbolErrorCounter", 500}}, CounterValues{{"SymbolErrorCounter", 500}}, 0, ""},
        ReasonCase{"rising", {{"PortRcvErrors", 40}}, CounterValues{{"PortRcvErrors", 20}}, 1, "rose by 20 in 2 s (10.0/s)"},
        ReasonCase{"xmit wait unjudged by default", {{"PortXmitWait", 999999}}, std::nullopt, 0, ""}));

TEST(AuditCounters, JudgeNamesTheSwitchPortAndHost) {
  Topology t;
  t.switches.push_back({0x10, "leaf01", 1, 40});
  TopologyHost h;
  h.name = "node01";
  HcaAttachment a;
  a.guid = 0x20;
  a.device = "mlx5_0";
  a.port = 1;
  h.hcas.push_back(a);
  t.hosts.push_back(h);
  PortNaming naming(t);
  CounterSample s{{0x20, 1}, PortRef{0x10, 3}, {{"SymbolErrorCounter", 500}}};
  std::vector<Finding> f = JudgeCounters({s}, {}, 0, DefaultCounterThresholds(), naming);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].check, "port_counter");
  EXPECT_EQ(f[0].host, "node01");
  EXPECT_EQ(f[0].switch_name, "leaf01");
  EXPECT_EQ(f[0].port, 3);
  EXPECT_EQ(FindingLocation(f[0]), "switch 0x0000000000000010/leaf01 port 3 ↔ node01 mlx5_0 port 1");
}

}  // namespace
}  // namespace topolaunch
