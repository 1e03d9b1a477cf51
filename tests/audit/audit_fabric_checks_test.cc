// The fabric checks on generated fabrics with faults written in, on
// hand-made capability data, and on the real dumps in tests/data/ibnet.
#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "cli/audit_test_util.h"
#include "audit/audit_fabric_checks.h"
#include "discover/ibnetdiscover_parser.h"
#include "support/fabric_generator.h"
#include "support/subprocess.h"
#include "topolaunch/topology.h"

namespace topolaunch::testing {
namespace {

struct Loaded {
  Fabric fabric;
  Topology topology;
};

Loaded Load(const std::string& text) {
  Result<Fabric> f = ParseIbnetdiscover(text, "net");
  EXPECT_TRUE(f.ok()) << f.error().Message();
  Loaded l{f.ok() ? *f : Fabric{}, {}};
  l.topology = BuildTopology(l.fabric, {}, {});
  return l;
}

std::vector<Finding> All(const Loaded& l) {
  std::vector<Finding> out = CheckLinkRates(l.fabric, l.topology);
  for (auto more : {CheckPortStates(l.fabric, l.topology), CheckHosts(l.fabric, l.topology)})
    out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::set<FindingKey> Serious(const std::vector<Finding>& found) {
  std::set<FindingKey> out;
  for (const Finding& f : found)
    if (f.severity >= Severity::kWarning)
      out.insert({std::string(SeverityName(f.severity)), f.check, f.host, f.switch_name});
  return out;
}

GeneratedFabric Tree() {
  FatTreeSpec spec;
  spec.leaves = 4;
  spec.hosts_per_leaf = 4;
  spec.spines = 2;
  return TwoLevelFatTree(spec);
}

TEST(AuditLinkRates, HealthyTreeHasNoFindings) { EXPECT_TRUE(All(Load(Tree().netfile)).empty()); }

TEST(AuditLinkRates, NarrowAndSlowHostLinksAreFlaggedByThePeerRule) {
  std::string net = SetHostLinkToken(Tree().netfile, "node03 mlx5_0", "1xHDR");
  net = SetHostLinkToken(net, "node10 mlx5_0", "4xEDR");
  std::vector<Finding> found = All(Load(net));
  EXPECT_EQ(Serious(found), (std::set<FindingKey>{{"error", "link_width", "node03", "leaf01"},
                                                  {"error", "link_speed", "node10", "leaf03"}}));
  for (const Finding& f : found) {
    ASSERT_EQ(f.reasons.size(), 1u);  // no capability data in a dump
    EXPECT_EQ(f.reasons[0].rfind("peer majority", 0), 0u) << f.reasons[0];
  }
}

// Capability data as the live source gives it.
Loaded WithSupport(std::string width, std::string speed, int degraded_ports) {
  Loaded l = Load(Tree().netfile);
  int degraded = 0;
  for (FabricNode& n : l.fabric.nodes)
    for (FabricPort& p : n.ports) {
      p.supported_width = width;
      p.supported_speed = speed;
      p.state = "Active";
    }
  // Leaf01's host ports (and their CA ends) report running at EDR.
  for (FabricNode& n : l.fabric.nodes)
    for (FabricPort& p : n.ports)
      if (p.remote && degraded < degraded_ports && n.description == "leaf01" && p.number <= 4) {
        p.speed = "EDR";
        FabricNode* peer = nullptr;
        for (FabricNode& m : l.fabric.nodes)
          if (m.guid == p.remote->node_guid) peer = &m;
        for (FabricPort& q : peer->ports) q.speed = "EDR";
        ++degraded;
      }
  return l;
}

TEST(AuditLinkRates, CapabilityRuleAloneIsAWarning) {
  Loaded l = WithSupport("4X", "HDR", 0);
  EXPECT_TRUE(CheckLinkRates(l.fabric, l.topology).empty());
  // Two of four host links at leaf01 at EDR: no majority at the switch, so
  // only the capability rule speaks.
  Loaded two = WithSupport("4X", "HDR", 2);
  std::vector<Finding> found = CheckLinkRates(two.fabric, two.topology);
  ASSERT_EQ(found.size(), 2u);
  for (const Finding& f : found) {
    EXPECT_EQ(f.severity, Severity::kWarning);
    EXPECT_EQ(f.check, "link_speed");
    EXPECT_EQ(f.reasons, std::vector<std::string>{"capability: runs EDR although both ends support HDR (iblinkinfo: could be HDR)"});
  }
}

TEST(AuditLinkRates, FabricWideShortfallIsOneInfoFinding) {
  Loaded l = WithSupport("12X", "HDR", 0);  // ibsim's claim
  std::vector<Finding> found = CheckLinkRates(l.fabric, l.topology);
  ASSERT_EQ(found.size(), 2u);  // host links, switch-to-switch links
  for (const Finding& f : found) EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
}

TEST(AuditPortStates, InitPortIsAnErrorAndAllInitIsNoSubnetManager) {
  Loaded l = Load(Tree().netfile);
  for (FabricNode& n : l.fabric.nodes)
    for (FabricPort& p : n.ports) p.state = "Active";
  FabricNode* ca = nullptr;
  for (FabricNode& n : l.fabric.nodes)
    if (n.description == "node07 mlx5_0") ca = &n;
  ASSERT_NE(ca, nullptr);
  ca->ports[0].state = "Armed";
  EXPECT_EQ(Serious(CheckPortStates(l.fabric, l.topology)),
            (std::set<FindingKey>{{"error", "port_state", "node07", "leaf02"}}));
  for (FabricNode& n : l.fabric.nodes)
    for (FabricPort& p : n.ports) p.state = "Init";
  EXPECT_EQ(Serious(CheckPortStates(l.fabric, l.topology)), (std::set<FindingKey>{{"critical", "port_state", "", ""}}));
}

TEST(AuditExpectedLinks, MissingCablesAreNamedByTheBaseline) {
  Loaded before = Load(Tree().netfile);
  Loaded now = Load(Tree().netfile);
  // node05's CA disappears (its cable unlinked); leaf04 port 5 loses its uplink.
  Guid gone = 0;
  for (const FabricNode& n : now.fabric.nodes)
    if (n.description == "node05 mlx5_0") gone = n.guid;
  std::erase_if(now.fabric.nodes, [&](const FabricNode& n) { return n.guid == gone; });
  for (FabricNode& n : now.fabric.nodes)
    for (FabricPort& p : n.ports)
      if (p.remote && p.remote->node_guid == gone) p.remote.reset(), p.state = "Down";
  Guid spine = 0;
  for (FabricNode& n : now.fabric.nodes)
    if (n.description == "leaf04")
      for (FabricPort& p : n.ports)
        if (p.number == 5) spine = p.remote->node_guid, p.remote.reset(), p.state = "Down";
  for (FabricNode& n : now.fabric.nodes)
    if (n.guid == spine) std::erase_if(n.ports, [](const FabricPort& p) { return p.number == 4; });
  std::vector<Finding> found = CheckExpectedLinks(now.fabric, before.topology);
  EXPECT_EQ(Serious(found), (std::set<FindingKey>{{"error", "link_down", "node05", "leaf02"},
                                                  {"error", "link_down", "", "leaf04"}}));
  EXPECT_TRUE(CheckExpectedLinks(before.fabric, before.topology).empty());
}

TEST(AuditHosts, HostWithFewerRailsThanPeersIsAnError) {
  RailSpec spec;
  spec.hosts = 4;
  spec.rails = 4;
  Loaded l = Load(RailOptimizedPod(spec).netfile);
  EXPECT_TRUE(Serious(CheckHosts(l.fabric, l.topology)).empty());
  for (FabricNode& n : l.fabric.nodes)
    if (n.description == "node02 mlx5_3") n.ports[0].state = "Down";
  EXPECT_EQ(Serious(CheckHosts(l.fabric, l.topology)), (std::set<FindingKey>{{"error", "host_rail_count", "node02", ""}}));
}

// A pod as admins really have them: GPU nodes with four rails, storage
// servers with two, a UFM server with one, a node whose description is still
// "localhost"; exactly the GPU node with a rail down is an error.
Loaded MixedKinds(bool heal) {
  RailSpec spec;
  spec.hosts = 12;
  spec.rails = 4;
  spec.host_prefix = "gpu";
  Result<Fabric> parsed = ParseIbnetdiscover(RailOptimizedPod(spec).netfile, "pod");
  EXPECT_TRUE(parsed.ok()) << parsed.error().Message();
  Loaded l{parsed.ok() ? *parsed : Fabric{}, {}};
  for (FabricNode& n : l.fabric.nodes) {
    if (n.type != NodeType::kCa) continue;
    int host = std::stoi(n.description.substr(3, 2)), rail = n.description.back() - '0';
    std::string device = n.description.substr(n.description.find(' '));
    if (host >= 8 && host <= 11) {  // stor01..stor04: two HCAs cabled, by design
      n.description = fmt::format("stor{:02}{}", host - 7, device);
      if (rail >= 2) n.ports[0].state = "Down";
    } else if (host == 12) {  // the UFM server: one port
      n.description = "ufm" + device;
      if (rail >= 1) n.ports[0].state = "Down";
    } else if (host == 7) {
      n.description = "localhost" + device;
    } else if (host == 3 && rail == 3 && !heal) {
      n.ports[0].state = "Down";
    }
  }
  l.topology = BuildTopology(l.fabric, {}, {});
  return l;
}

TEST(AuditHosts, EachKindOfHostIsJudgedAmongItsOwn) {
  Loaded sick = MixedKinds(false);
  EXPECT_EQ(sick.topology.FindHost("localhost"), nullptr);  // four CAs, never one merged "host"
  std::vector<Finding> found = CheckHosts(sick.fabric, sick.topology);
  std::set<FindingKey> errors;
  int default_descriptions = 0;
  for (const Finding& f : found) {
    if (f.severity == Severity::kError) errors.insert({"error", f.check, f.host, f.switch_name});
    if (f.check == "default_node_description") {
      ++default_descriptions;
      EXPECT_EQ(f.severity, Severity::kWarning);
      ASSERT_FALSE(f.reasons.empty());
      EXPECT_NE(f.reasons[0].find("\"localhost\" is an OS default host name"), std::string::npos) << f.reasons[0];
    }
  }
  EXPECT_EQ(errors, (std::set<FindingKey>{{"error", "host_rail_count", "gpu03", ""}}));
  EXPECT_EQ(default_descriptions, 4);
  for (const Finding& f : found)
    if (f.check == "host_rail_count")
      EXPECT_NE(f.message.find("gpu03 has 3 active HCA ports, the other gpu# hosts have 4"), std::string::npos) << f.message;

  Loaded healed = MixedKinds(true);
  for (const Finding& f : CheckHosts(healed.fabric, healed.topology))
    EXPECT_LT(f.severity, Severity::kError) << f.check << ": " << f.message;
}

TEST(AuditHosts, AFewHostsOfAKindAreNotJudgedByMajority) {
  RailSpec spec;
  spec.hosts = 3;  // below kMinHostsOfAKind
  spec.rails = 2;
  Loaded l = Load(RailOptimizedPod(spec).netfile);
  for (FabricNode& n : l.fabric.nodes)
    if (n.description == "node02 mlx5_1") n.ports[0].state = "Down";
  EXPECT_TRUE(Serious(CheckHosts(l.fabric, l.topology)).empty());
}

TEST(AuditHosts, UnmappedCasAreReported) {
  Loaded l = Load(FabricWithUnmappedCas().netfile);
  int warnings = 0, infos = 0;
  for (const Finding& f : CheckHosts(l.fabric, l.topology)) {
    EXPECT_EQ(f.check, "unmapped_ca");
    (f.severity == Severity::kInfo ? infos : warnings)++;
  }
  EXPECT_EQ(infos, 1);     // the SHARP aggregation node
  EXPECT_EQ(warnings, 2);  // firmware default and empty descriptions
}

// The real dumps: each finding below was checked by reading the file.
struct DumpCase {
  std::string file;
  std::map<std::string, int> serious;  // check -> findings at warning or above
};

class AuditSharedDump : public ::testing::TestWithParam<DumpCase> {};

TEST_P(AuditSharedDump, FindsWhatTheFileReallyHolds) {
  std::string path = TestDataDir() + "/ibnet/" + GetParam().file;
  std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty()) << path << " is missing or empty";
  std::map<std::string, int> serious;
  for (const Finding& f : All(Load(text)))
    if (f.severity >= Severity::kWarning) ++serious[f.check];
  EXPECT_EQ(serious, GetParam().serious);
}

INSTANTIATE_TEST_SUITE_P(
    Dumps, AuditSharedDump,
    ::testing::Values(
        // The CA's end of ISR9024 port 12 says 1xSDR among 4X host links; all
        // four CAs carry the firmware default description.
        DumpCase{"doc-manpage-ibnetdiscover-2sw-4ca.ibnet", {{"link_width", 1}, {"unmapped_ca", 4}}},
        DumpCase{"doc-nvidia-ibdiagpath-2sw-6ca.ibnet", {}},
        DumpCase{"gb200-isolated-single-ca-0sw-1ca.ibnet", {}},
        // The SX6036 loop-back cable (ports 25/26) runs FDR10 among FDR
        // switch links; the SHARP node is only info.
        DumpCase{"nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet", {{"link_speed", 1}}},
        // Two hosts on 4036-8BBA at DDR where its other hosts run QDR; all
        // 89 CAs have firmware default descriptions.
        DumpCase{"psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet", {{"link_speed", 2}, {"unmapped_ca", 89}}},
        DumpCase{"quantum-hdr-2019-60sw-2ca-crlf.ibnet", {}},
        DumpCase{"stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", {}}),
    [](const ::testing::TestParamInfo<DumpCase>& info) {
      std::string name = info.param.file.substr(0, info.param.file.find('-', 4));
      for (char& c : name) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return name + std::to_string(info.index);
    });

}  // namespace
}  // namespace topolaunch::testing
