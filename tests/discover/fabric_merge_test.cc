#include "discover/fabric_merge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "discover/ibnetdiscover_parser.h"
#include "topolaunch/topology.h"

namespace topolaunch {
namespace {

// One rail's subnet: leaf 0x<k>000 with gpu01 and gpu02's mlx5_<k>, whose
// CA GUIDs are `ca1` and `ca2`.
std::string RailDump(int k, const std::string& ca1 = "", const std::string& ca2 = "") {
  std::string a = ca1.empty() ? fmt::format("{:x}100", 0xa + k) : ca1;
  std::string b = ca2.empty() ? fmt::format("{:x}200", 0xa + k) : ca2;
  return fmt::format(R"(switchguid=0x{k}000({k}000)
Switch  36 "S-000000000000{k}000"         # "rail{k}-leaf" base port 0 lid 1 lmc 0
[1]     "H-000000000000{a}"[1]({a}1)         # "gpu01 mlx5_{k}" lid 2 4xHDR
[2]     "H-000000000000{b}"[1]({b}1)         # "gpu02 mlx5_{k}" lid 3 4xHDR

caguid=0x{a}
Ca      2 "H-000000000000{a}"          # "gpu01 mlx5_{k}"
[1]({a}1)     "S-000000000000{k}000"[1]         # lid 2 lmc 0 "rail{k}-leaf" lid 1 4xHDR

caguid=0x{b}
Ca      2 "H-000000000000{b}"          # "gpu02 mlx5_{k}"
[1]({b}1)     "S-000000000000{k}000"[2]         # lid 3 lmc 0 "rail{k}-leaf" lid 1 4xHDR
)",
                     fmt::arg("k", k + 1), fmt::arg("a", a), fmt::arg("b", b));
}

Fabric Parse(const std::string& text, const std::string& name) {
  Result<Fabric> fabric = ParseIbnetdiscover(text, name);
  EXPECT_TRUE(fabric.ok()) << fabric.error().Message() << "\n" << text;
  return fabric.ok() ? *fabric : Fabric{};
}

TEST(MergeFabrics, RailSubnetsBecomeOneTopologyWithEveryPort) {
  Result<Fabric> merged = MergeFabrics({Parse(RailDump(0), "rail0"), Parse(RailDump(1), "rail1")}, {"rail0", "rail1"});
  ASSERT_TRUE(merged.ok()) << merged.error().Message();
  EXPECT_EQ(merged->nodes.size(), 6u);
  Topology topology = BuildTopology(*merged, {}, {});
  const TopologyHost* gpu01 = topology.FindHost("gpu01");
  ASSERT_NE(gpu01, nullptr);
  ASSERT_EQ(gpu01->hcas.size(), 2u);
  EXPECT_TRUE(gpu01->hcas[0].switch_guid && gpu01->hcas[1].switch_guid);
  EXPECT_NE(*gpu01->hcas[0].switch_guid, *gpu01->hcas[1].switch_guid);
}

TEST(MergeFabrics, OneHcaWithAPortOnEachSubnetIsOneNode) {
  // A dual-port HCA: its port 1 in both dumps would be a conflict, so the
  // second subnet's dump lists port 2 (rail 1's leaf, port 1).
  std::string rail1 = RailDump(1, "b100", "b200");
  Fabric second = Parse(rail1, "rail1");
  for (FabricNode& node : second.nodes) {
    if (node.guid == 0xb100) {
      node.guid = 0xa100;
      node.ports[0].number = 2;
    }
    for (FabricPort& port : node.ports)
      if (port.remote && port.remote->node_guid == 0xb100) port.remote = PortRef{0xa100, 2};
  }
  Result<Fabric> merged = MergeFabrics({Parse(RailDump(0), "rail0"), second}, {"rail0", "rail1"});
  ASSERT_TRUE(merged.ok()) << merged.error().Message();
  const FabricNode* hca = merged->FindNode(0xa100);
  ASSERT_NE(hca, nullptr);
  ASSERT_EQ(hca->ports.size(), 2u);
  EXPECT_EQ(hca->ports[0].number, 1);
  EXPECT_EQ(hca->ports[1].number, 2);
}

TEST(MergeFabrics, TheSameDumpTwiceIsTheSameFabric) {
  Result<Fabric> merged = MergeFabrics({Parse(RailDump(0), "a"), Parse(RailDump(0), "b")}, {"a", "b"});
  ASSERT_TRUE(merged.ok()) << merged.error().Message();
  EXPECT_EQ(BuildTopology(*merged, {}, {}), BuildTopology(Parse(RailDump(0), "a"), {}, {}));
}

TEST(MergeFabrics, APortCabledTwoWaysNamesBothFiles) {
  // rail1's dump claims gpu01's rail-0 HCA (same GUID, same port 1).
  Result<Fabric> merged =
      MergeFabrics({Parse(RailDump(0), "rail0.ibnet"), Parse(RailDump(1, "b100"), "rail1.ibnet")},
                   {"rail0.ibnet", "rail1.ibnet"});
  ASSERT_TRUE(merged.ok());  // distinct GUIDs: no conflict
  merged = MergeFabrics({Parse(RailDump(0), "rail0.ibnet"), Parse(RailDump(1, "a100"), "rail1.ibnet")},
                        {"rail0.ibnet", "rail1.ibnet"});
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().code, ErrorCode::kBadInput);
  EXPECT_NE(merged.error().Message().find("rail0.ibnet and rail1.ibnet: port 1 of 0x000000000000a100 is cabled to "
                                          "0x0000000000001000 port 1 in one and to 0x0000000000002000 port 1"),
            std::string::npos)
      << merged.error().Message();
}

TEST(MergeFabrics, ASwitchInOneIsNoCaInAnother) {
  Fabric other = Parse(RailDump(1), "b");
  for (FabricNode& node : other.nodes)
    if (node.type == NodeType::kSwitch) node.guid = 0xa100;
  Result<Fabric> merged = MergeFabrics({Parse(RailDump(0), "a"), other}, {"a", "b"});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.error().Message().find("is a Ca in one and a Switch in the other"), std::string::npos)
      << merged.error().Message();
}

}  // namespace
}  // namespace topolaunch
