#include <gtest/gtest.h>

#include "topolaunch/topology.h"

namespace topolaunch {
namespace {

// A tiny fabric builder: nodes by name, cables between (node, port) pairs.
class FabricBuilder {
 public:
  FabricBuilder& Switch(Guid guid, std::string desc, int ports = 36) { return Add(NodeType::kSwitch, guid, desc, ports); }
  FabricBuilder& Ca(Guid guid, std::string desc, int ports = 1) { return Add(NodeType::kCa, guid, desc, ports); }
  FabricBuilder& Cable(Guid a, int pa, Guid b, int pb, std::string width = "4X", std::string speed = "HDR") {
    Port(a, pa, b, pb, width, speed);
    Port(b, pb, a, pa, width, speed);
    return *this;
  }
  Fabric Build() const { return fabric_; }

 private:
  FabricBuilder& Add(NodeType type, Guid guid, std::string desc, int ports) {
    fabric_.source = "ibnetdiscover";
    fabric_.nodes.push_back({type, guid, guid, std::move(desc), ports, {}});
    return *this;
  }
  void Port(Guid node, int port, Guid peer, int peer_port, const std::string& width, const std::string& speed) {
    for (FabricNode& n : fabric_.nodes)
      if (n.guid == node) n.ports.push_back({port, node + static_cast<Guid>(port), 0, width, speed, "", PortRef{peer, peer_port}, "", ""});
  }
  Fabric fabric_;
};

constexpr Guid kSpine = 0x100, kLeaf1 = 0x200, kLeaf2 = 0x300;

Fabric SmallTree() {
  return FabricBuilder()
      .Switch(kSpine, "spine1")
      .Switch(kLeaf1, "leaf1")
      .Switch(kLeaf2, "leaf2")
      .Switch(0x400, "orphan-switch")
      .Cable(kLeaf1, 30, kSpine, 1)
      .Cable(kLeaf2, 30, kSpine, 2)
      .Ca(0x1000, "node10 mlx5_0")
      .Ca(0x1100, "node2 mlx5_0")
      .Ca(0x1200, "node2 mlx5_1")         // multi-rail: second HCA of node2
      .Ca(0x1300, "node3 HCA-1", 2)       // dual-homed: one HCA, two switches
      .Ca(0x1400, "MT4129 ConnectX7   Mellanox Technologies")
      .Ca(0x1500, "Mellanox Technologies Aggregation Node")
      .Ca(0x1600, "lonely mlx5_0")        // isolated: no cable at all
      .Cable(0x1000, 1, kLeaf2, 1)
      .Cable(0x1100, 1, kLeaf1, 1)
      .Cable(0x1200, 1, kLeaf2, 2, "4X", "EDR")
      .Cable(0x1300, 1, kLeaf1, 3)
      .Cable(0x1300, 2, kLeaf2, 3)
      .Cable(0x1400, 1, kLeaf1, 4)
      .Cable(0x1500, 1, kSpine, 36)
      .Build();
}

TEST(BuildTopology, NamesHostsFromDescriptionsInNaturalOrder) {
  Topology t = BuildTopology(SmallTree(), {}, {"topolaunch test", "2026-01-01T00:00:00Z", "x"});
  std::vector<std::string> names;
  for (const TopologyHost& h : t.hosts) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"lonely", "node2", "node3", "node10"}));
  EXPECT_EQ(t.generated.by, "topolaunch test");
}

TEST(BuildTopology, MultiRailAndDualHomedHostsAreOneHostWithSeveralAttachments) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  const TopologyHost* node2 = t.FindHost("node2");
  ASSERT_NE(node2, nullptr);
  ASSERT_EQ(node2->hcas.size(), 2u);
  EXPECT_EQ(node2->hcas[0].device, "mlx5_0");
  EXPECT_EQ(node2->hcas[0].switch_guid, kLeaf1);
  EXPECT_EQ(node2->hcas[1].device, "mlx5_1");
  EXPECT_EQ(node2->hcas[1].switch_guid, kLeaf2);
  EXPECT_EQ(node2->hcas[1].rate_gbps, 100.0);
  EXPECT_EQ(node2->hcas[1].speed, "EDR");

  const TopologyHost* node3 = t.FindHost("node3");
  ASSERT_NE(node3, nullptr);
  ASSERT_EQ(node3->hcas.size(), 2u);
  EXPECT_EQ(node3->hcas[0].port, 1);
  EXPECT_EQ(node3->hcas[1].port, 2);
  EXPECT_EQ(node3->hcas[0].device, "");  // "HCA-1" is a label, not an RDMA device name
  EXPECT_EQ(node3->hcas[1].switch_port, 3);
}

TEST(BuildTopology, OneHostPerNameEvenWhereNamesAreNumericallyEqualOrItsCasApart) {
  // "gpu1" and "gpu01" are different hosts that sort side by side; gpu1's
  // two HCAs are listed apart, with another host between them.
  Fabric fabric = FabricBuilder()
                      .Switch(kLeaf1, "leaf1")
                      .Ca(0x3000, "gpu1 mlx5_1")
                      .Ca(0x2000, "gpu01 mlx5_0")
                      .Ca(0x1000, "gpu1 mlx5_0")
                      .Cable(0x3000, 1, kLeaf1, 3)
                      .Cable(0x2000, 1, kLeaf1, 2)
                      .Cable(0x1000, 1, kLeaf1, 1)
                      .Build();
  Topology t = BuildTopology(fabric, {}, {});
  ASSERT_EQ(t.hosts.size(), 2u);
  EXPECT_EQ(t.hosts[0].name, "gpu01");
  EXPECT_EQ(t.hosts[1].name, "gpu1");
  ASSERT_EQ(t.hosts[0].hcas.size(), 1u);
  ASSERT_EQ(t.hosts[1].hcas.size(), 2u);
  EXPECT_EQ(t.hosts[1].hcas[0].guid, 0x1000u);  // by CA guid, not by fabric order
  EXPECT_EQ(t.hosts[1].hcas[1].guid, 0x3000u);
  EXPECT_EQ(t.hosts[1].hcas[1].switch_port, 3);
}

TEST(BuildTopology, NonHostCasGoToUnmappedWithReasons) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  ASSERT_EQ(t.unmapped.size(), 2u);
  EXPECT_EQ(t.unmapped[0].guid, 0x1400u);
  EXPECT_NE(t.unmapped[0].reason.find("firmware default"), std::string::npos);
  EXPECT_EQ(t.unmapped[1].guid, 0x1500u);
  EXPECT_NE(t.unmapped[1].reason.find("SHARP"), std::string::npos);
  EXPECT_EQ(t.FindHost("MT4129"), nullptr);
  EXPECT_EQ(t.FindHost("Mellanox"), nullptr);
}

TEST(BuildTopology, IsolatedCaIsAHostWithUncabledPorts) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  const TopologyHost* lonely = t.FindHost("lonely");
  ASSERT_NE(lonely, nullptr);
  ASSERT_EQ(lonely->hcas.size(), 1u);
  EXPECT_FALSE(lonely->hcas[0].switch_guid.has_value());
  EXPECT_FALSE(lonely->hcas[0].rate_gbps.has_value());
}

TEST(BuildTopology, SwitchLevelsByDistanceFromLeaves) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  ASSERT_EQ(t.switches.size(), 4u);
  EXPECT_EQ(t.FindSwitch(kLeaf1)->level, 1);
  EXPECT_EQ(t.FindSwitch(kLeaf2)->level, 1);
  // The spine has a SHARP node on it, which does not make it a leaf.
  EXPECT_EQ(t.FindSwitch(kSpine)->level, 2);
  EXPECT_EQ(t.FindSwitch(0x400)->level, 0);
  EXPECT_EQ(t.switches.back().name, "orphan-switch");  // unreachable switches sort last
}

TEST(BuildTopology, FirmwareDefaultCaStillMakesItsSwitchALeaf) {
  Fabric f = FabricBuilder()
                 .Switch(1, "leafA")
                 .Switch(2, "spineA")
                 .Cable(1, 10, 2, 1)
                 .Ca(0x10, "MT25408 ConnectX Mellanox Technologies")
                 .Cable(0x10, 1, 1, 1)
                 .Build();
  Topology t = BuildTopology(f, {}, {});
  EXPECT_EQ(t.FindSwitch(1)->level, 1);
  EXPECT_EQ(t.FindSwitch(2)->level, 2);
  EXPECT_TRUE(t.hosts.empty());
}

TEST(BuildTopology, EachCableOnceFromItsSmallerEnd) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  // 2 ISLs + node10, node2 x2, node3 x2, MT4129, SHARP = 9 cables.
  ASSERT_EQ(t.links.size(), 9u);
  for (const TopologyLink& l : t.links) EXPECT_LT(l.from, l.to);
  const TopologyLink& first = t.links.front();
  EXPECT_EQ(first.from, (PortRef{kSpine, 1}));
  EXPECT_EQ(first.to, (PortRef{kLeaf1, 30}));
}

TEST(BuildTopology, LoopbackCableOnOneSwitch) {
  Fabric f = FabricBuilder().Switch(1, "sw").Cable(1, 25, 1, 26).Ca(0x10, "h1 mlx5_0").Cable(0x10, 1, 1, 1).Build();
  Topology t = BuildTopology(f, {}, {});
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.FindSwitch(1)->level, 1);
}

TEST(BuildTopology, NodeNameMapRenamesHostsAndSwitches) {
  NodeNameMap map{{0x1400, "node7 mlx5_0"}, {kLeaf1, "rack1-leaf"}, {0x1000, "Mellanox Technologies"}};
  Topology t = BuildTopology(SmallTree(), map, {});
  EXPECT_NE(t.FindHost("node7"), nullptr);
  EXPECT_EQ(t.FindSwitch(kLeaf1)->name, "rack1-leaf");
  // A map entry that is itself not a host name: unmapped, and the reason says the map is why.
  EXPECT_EQ(t.FindHost("node10"), nullptr);
  bool found = false;
  for (const UnmappedCa& u : t.unmapped)
    if (u.guid == 0x1000) found = u.reason.starts_with("node-name-map entry");
  EXPECT_TRUE(found);
}

TEST(AttachLayout, AddsHostsTheFabricDidNotKnowInNaturalOrder) {
  Topology t = BuildTopology(SmallTree(), {}, {});
  HostLayout layout;
  layout.hostname = "node5";
  AttachLayout(t, "node5", layout);
  AttachLayout(t, "node2", layout);
  ASSERT_EQ(t.hosts.size(), 5u);
  EXPECT_EQ(t.hosts[3].name, "node5");  // lonely, node2, node3, node5, node10
  EXPECT_TRUE(t.hosts[3].hcas.empty());
  EXPECT_TRUE(t.FindHost("node2")->layout.has_value());
}

struct DescriptionCase {
  std::string description;
  bool is_host;
  std::string reason_fragment;
};

class WhyNotAHost : public ::testing::TestWithParam<DescriptionCase> {};

TEST_P(WhyNotAHost, Classifies) {
  const DescriptionCase& c = GetParam();
  std::optional<std::string> why = WhyNotAHostDescription(c.description);
  EXPECT_EQ(!why.has_value(), c.is_host) << c.description;
  if (why) {
    EXPECT_NE(why->find(c.reason_fragment), std::string::npos) << *why;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Descriptions, WhyNotAHost,
    ::testing::Values(DescriptionCase{"node017 mlx5_0", true, ""}, DescriptionCase{"r-dmz-ufm134 HCA-1", true, ""},
                      DescriptionCase{"stage98 mlx4_0", true, ""}, DescriptionCase{"gpu-a.cluster mlx5_3", true, ""},
                      DescriptionCase{"MT4129 ConnectX7   Mellanox Technologies", false, "firmware default"},
                      DescriptionCase{"MT25408 ConnectX Mellanox Technologies", false, "firmware default"},
                      DescriptionCase{"Mellanox Technologies Aggregation Node", false, "SHARP"},
                      DescriptionCase{"MF0;r-ufm-sw95:MQM8700/U1", false, "switch management"},
                      DescriptionCase{"", false, "empty"}, DescriptionCase{"   ", false, "empty"},
                      DescriptionCase{"node$(reboot) mlx5_0", false, "not a host name"},
                      DescriptionCase{"-rf mlx5_0", false, "not a host name"}));

TEST(NaturalLess, OrdersNumbersByValue) {
  EXPECT_TRUE(NaturalLess("node2", "node10"));
  EXPECT_FALSE(NaturalLess("node10", "node2"));
  EXPECT_TRUE(NaturalLess("node1-ib", "node1-ib2"));
  EXPECT_TRUE(NaturalLess("a9b", "a10a"));
  EXPECT_TRUE(NaturalLess("gpu", "node"));
  EXPECT_TRUE(NaturalLess("node01", "node1"));  // equal value: bytewise tie-break, still a strict order
  EXPECT_FALSE(NaturalLess("node1", "node01"));
  EXPECT_FALSE(NaturalLess("same", "same"));
}

TEST(IsValidHostName, AcceptsHostNamesOnly) {
  EXPECT_TRUE(IsValidHostName("node017"));
  EXPECT_TRUE(IsValidHostName("gpu-a.cluster.example"));
  EXPECT_FALSE(IsValidHostName(""));
  EXPECT_FALSE(IsValidHostName("-oProxyCommand=x"));
  EXPECT_FALSE(IsValidHostName("a b"));
  EXPECT_FALSE(IsValidHostName("a;b"));
  EXPECT_FALSE(IsValidHostName(std::string(254, 'a')));
}

}  // namespace
}  // namespace topolaunch
