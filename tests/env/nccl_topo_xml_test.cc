#include "env/nccl_topo_xml.h"

#include <gtest/gtest.h>

#include "env/nccl_xml_reader.h"

namespace topolaunch {
namespace {

using testing::NcclXmlReader;
using testing::XmlElement;

// Two sockets; GPU 0 and mlx5_0 behind one PCIe switch on NUMA 0, GPU 1 on
// NUMA 1 alone, mlx5_1 on NUMA 1; an AMD GPU that NCCL does not drive.
HostLayout TwoSocketLayout() {
  HostLayout layout;
  layout.architecture = "x86_64";
  layout.numa_nodes = {{0, 0, {0, 1, 2, 3}, 0}, {1, 1, {32, 33}, 0}};
  layout.gpus = {{"0000:07:00.0", "nvidia", "A100", {"cuda0"}, 0, PcieLink{31.5}, {}},
                 {"0000:0a:00.0", "amd", "MI100", {}, 0, std::nullopt, {}},
                 {"0000:87:00.0", "nvidia", "A100", {"cuda1"}, 1, PcieLink{31.5}, {}}};
  layout.nics = {{"mlx5_0", "openfabrics", "0000:0c:00.0", {"ib0"}, 0xa1, 0, PcieLink{31.5}},
                 {"mlx5_1", "openfabrics", "0000:8c:00.0", {"ib1"}, 0xa2, 1, PcieLink{15.75}}};
  layout.gpu_nic_paths = {{"0000:07:00.0", "mlx5_0", PcieRelation::kSamePcieSwitch},
                          {"0000:07:00.0", "mlx5_1", PcieRelation::kAcrossSockets},
                          {"0000:87:00.0", "mlx5_0", PcieRelation::kAcrossSockets},
                          {"0000:87:00.0", "mlx5_1", PcieRelation::kSameSocket}};
  return layout;
}

TEST(NcclTopoXml, ParsesBackWithTheStructureNcclExpects) {
  std::vector<ComputePort> ports = {{"mlx5_0", 1, 0xa1, 200.0, "0000:0c:00.0"}, {"mlx5_1", 1, 0xa2, 200.0, "0000:8c:00.0"}};
  Result<std::string> xml = FormatNcclTopoXml(TwoSocketLayout(), ports, FabricKind::kInfiniband);
  ASSERT_TRUE(xml.ok());
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error() << "\n" << *xml;
  EXPECT_EQ(root->name, "system");
  EXPECT_EQ(root->Attribute("version"), "1");
  ASSERT_EQ(root->children.size(), 2u);
  const XmlElement& cpu0 = root->children[0];
  EXPECT_EQ(cpu0.name, "cpu");
  EXPECT_EQ(cpu0.Attribute("numaid"), "0");
  EXPECT_EQ(cpu0.Attribute("affinity"), "0000000f");
  EXPECT_EQ(cpu0.Attribute("arch"), "x86_64");
  EXPECT_EQ(root->children[1].Attribute("affinity"), "00000003,00000000");
  // NUMA 0: one virtual switch holding GPU 0 and mlx5_0.
  ASSERT_EQ(cpu0.children.size(), 1u);
  const XmlElement& sw = cpu0.children[0];
  EXPECT_EQ(sw.Attribute("busid"), "ffff:ff:01.0");
  EXPECT_EQ(sw.Attribute("class"), "0x060400");
  ASSERT_EQ(sw.children.size(), 2u);
  EXPECT_EQ(sw.children[0].Attribute("busid"), "0000:07:00.0");
  EXPECT_EQ(sw.children[0].Attribute("class"), "0x030200");
  EXPECT_EQ(sw.children[0].Attribute("link_speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(sw.children[0].Attribute("link_width"), "16");
  ASSERT_EQ(sw.children[0].children.size(), 1u);
  EXPECT_EQ(sw.children[0].children[0].name, "gpu");
  EXPECT_EQ(sw.children[0].children[0].Attribute("dev"), "0");
  EXPECT_FALSE(sw.children[0].children[0].Attribute("sm"));  // left to NCCL
  EXPECT_EQ(sw.children[1].Attribute("class"), "0x020700");
  std::vector<const XmlElement*> nets;
  root->Collect("net", nets);
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(nets[0]->Attribute("name"), "mlx5_0");
  EXPECT_EQ(nets[0]->Attribute("port"), "1");
  EXPECT_EQ(nets[0]->Attribute("speed"), "200000");
  EXPECT_EQ(nets[0]->Attribute("guid"), "0x00000000000000a1");
  // NUMA 1: GPU 1 (dev 1: the AMD GPU is not counted) and mlx5_1 directly under the CPU.
  std::vector<const XmlElement*> gpus;
  root->children[1].Collect("gpu", gpus);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->Attribute("dev"), "1");
  EXPECT_EQ(root->children[1].children.size(), 2u);
  EXPECT_EQ(root->children[1].children[1].Attribute("link_speed"), "8.0 GT/s PCIe");
}

TEST(NcclTopoXml, RocePortsWithoutPciSitUnderTheCpu) {
  HostLayout layout;
  layout.architecture = "aarch64";
  std::vector<ComputePort> ports = {{"rxe0", 1, std::nullopt, std::nullopt, ""}};
  Result<std::string> xml = FormatNcclTopoXml(layout, ports, FabricKind::kRoce);
  ASSERT_TRUE(xml.ok());
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error();
  ASSERT_EQ(root->children.size(), 1u);
  EXPECT_EQ(root->children[0].Attribute("arch"), "arm64");
  EXPECT_EQ(root->children[0].children[0].name, "nic");
  EXPECT_EQ(root->children[0].children[0].children[0].Attribute("name"), "rxe0");
}

TEST(NcclTopoXml, CpuMaskAndLinkTable) {
  EXPECT_EQ(FormatCpuMask({}), "00000000");
  EXPECT_EQ(FormatCpuMask({0, 31, 32, 64}), "00000001,00000001,80000001");
  struct Case { double gbytes; std::string speed; int width; };
  for (const Case& c : {Case{31.5, "16.0 GT/s PCIe", 16}, Case{15.75, "8.0 GT/s PCIe", 16}, Case{63.0, "32.0 GT/s PCIe", 16},
                        Case{4.0, "2.5 GT/s PCIe", 16}, Case{0.25, "2.5 GT/s PCIe", 1}}) {
    auto [speed, width] = PcieLinkAttributes(c.gbytes);
    EXPECT_EQ(speed, c.speed) << c.gbytes;
    EXPECT_EQ(width, c.width) << c.gbytes;
  }
}

TEST(NcclTopoXml, ReaderRejectsWhatNcclCannotParse) {
  NcclXmlReader reader;
  EXPECT_FALSE(reader.Parse("<?xml version=\"1.0\"?><system version=\"1\"/>"));
  EXPECT_FALSE(reader.Parse("<system version='1'/>"));
  EXPECT_FALSE(reader.Parse("<system version=\"1\" />"));
  EXPECT_FALSE(reader.Parse("<system version=\"1\"><cpu></system>"));
  EXPECT_TRUE(reader.Parse("<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n"));
}

}  // namespace
}  // namespace topolaunch
