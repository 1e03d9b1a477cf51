#include "env/nccl_topo_xml.h"

#include <gtest/gtest.h>

#include <set>

#include "env/nccl_paths.h"
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
  EXPECT_TRUE(sw.children[0].children[0].attributes.empty()) << "dev, sm, rank, gdr: left to NCCL";
  EXPECT_EQ(sw.children[1].Attribute("class"), "0x020700");
  std::vector<const XmlElement*> nets;
  root->Collect("net", nets);
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(nets[0]->Attribute("name"), "mlx5_0");
  EXPECT_EQ(nets[0]->Attribute("port"), "1");
  EXPECT_EQ(nets[0]->Attribute("speed"), "200000");
  EXPECT_EQ(nets[0]->Attribute("guid"), "0x00000000000000a1");
  // NUMA 1: GPU 1 (the AMD GPU is not NCCL's) and mlx5_1 directly under the CPU.
  std::vector<const XmlElement*> gpus;
  root->children[1].Collect("gpu", gpus);
  ASSERT_EQ(gpus.size(), 1u);
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

// The reader follows NCCL's parser (xml.cc xmlGetNode/xmlGetValue): what it
// takes, NCCL takes, and the other way round.
TEST(NcclTopoXml, ReaderReadsWhatNcclReadsAndNothingElse) {
  NcclXmlReader reader;
  EXPECT_FALSE(reader.Parse("<?xml version=\"1.0\"?><system version=\"1\"/>")) << "no declaration";
  EXPECT_FALSE(reader.Parse("<system version=\"1\"><cpu></system>"));
  EXPECT_FALSE(reader.Parse("<system version=\"1\" / >")) << "'/' then the next token must end in '>'";
  EXPECT_FALSE(reader.Parse("<system\nversion=\"1\"/>")) << "a newline ends the attributes";
  EXPECT_FALSE(reader.Parse("<system version=1/>")) << "values are quoted";
  EXPECT_FALSE(reader.Parse("<system version=\"1\">text</system>"));
  EXPECT_TRUE(reader.Parse("<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n"));
  // Accepted by NCCL, so accepted here: single quotes, a space before "/>",
  // comments, \r\n line ends.
  std::optional<XmlElement> quoted = reader.Parse("<system version='1'>\r\n<!-- made by hand -->\r\n<cpu numaid='0' />\r\n</system>");
  ASSERT_TRUE(quoted) << reader.error();
  EXPECT_EQ(quoted->Attribute("version"), "1");
  ASSERT_EQ(quoted->children.size(), 1u);
  EXPECT_EQ(quoted->children[0].attributes.size(), 1u);
  // Values: at most 253 characters (MAX_STR_LEN 255 with the closing quote).
  std::string longest(253, 'f'), too_long(254, 'f');
  EXPECT_TRUE(reader.Parse("<cpu affinity=\"" + longest + "\"/>")) << reader.error();
  EXPECT_FALSE(reader.Parse("<cpu affinity=\"" + too_long + "\"/>"));
  // At most 16 attributes are kept; the rest NCCL ignores.
  std::string many = "<cpu";
  for (int i = 0; i < 20; ++i) many += " a" + std::to_string(i) + "=\"1\"";
  std::optional<XmlElement> crowded = reader.Parse(many + "/>");
  ASSERT_TRUE(crowded);
  EXPECT_EQ(crowded->attributes.size(), 16u);
}

// Two switch levels, as in DGX-2 class machines: a root port, a top switch
// (upstream 0000:01:00.0, downstream ports 02:00.0 and 02:04.0), under each
// downstream port a second switch holding a pair of GPUs and a NIC.
HostLayout TwoLevelSwitchLayout() {
  HostLayout layout;
  layout.architecture = "x86_64";
  layout.numa_nodes = {{0, 0, {0, 1}, 0}};
  auto bridge = [](std::string id, std::string parent, double gbs) { return PciBridge{id, parent, PcieLink{gbs}}; };
  layout.pci_bridges = {bridge("0000:00:01.0", "", 31.5),      bridge("0000:01:00.0", "0000:00:01.0", 31.5),
                        bridge("0000:02:00.0", "0000:01:00.0", 31.5), bridge("0000:02:04.0", "0000:01:00.0", 31.5),
                        bridge("0000:03:00.0", "0000:02:00.0", 15.75), bridge("0000:04:00.0", "0000:03:00.0", 15.75),
                        bridge("0000:04:04.0", "0000:03:00.0", 15.75), bridge("0000:04:08.0", "0000:03:00.0", 15.75),
                        bridge("0000:08:00.0", "0000:02:04.0", 15.75), bridge("0000:09:00.0", "0000:08:00.0", 15.75),
                        bridge("0000:09:04.0", "0000:08:00.0", 15.75)};
  auto gpu = [](std::string id, std::string parent) {
    Gpu g{id, "nvidia", "V100", {}, 0, PcieLink{15.75}, {}};
    g.pci_parent = std::move(parent);
    return g;
  };
  layout.gpus = {gpu("0000:05:00.0", "0000:04:00.0"), gpu("0000:06:00.0", "0000:04:04.0"), gpu("0000:0a:00.0", "0000:09:00.0")};
  Nic nic{"mlx5_0", "openfabrics", "0000:07:00.0", {}, 0xa1, 0, PcieLink{15.75}};
  nic.pci_parent = "0000:04:08.0";
  Nic far{"mlx5_1", "openfabrics", "0000:0b:00.0", {}, 0xa2, 0, PcieLink{15.75}};
  far.pci_parent = "0000:09:04.0";
  layout.nics = {nic, far};
  return layout;
}

TEST(NcclTopoXml, EverySwitchLevelIsWrittenAsNcclWouldFindIt) {
  HostLayout layout = TwoLevelSwitchLayout();
  std::vector<ComputePort> ports = {{"mlx5_0", 1, 0xa1, 100.0, "0000:07:00.0"}, {"mlx5_1", 1, 0xa2, 100.0, "0000:0b:00.0"}};
  Result<std::string> xml = FormatNcclTopoXml(layout, ports, FabricKind::kInfiniband);
  ASSERT_TRUE(xml.ok());
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error() << "\n" << *xml;
  // cpu > top switch (its upstream port) > one second-level switch per pair.
  const XmlElement& cpu = root->children.at(0);
  ASSERT_EQ(cpu.children.size(), 1u) << *xml;
  const XmlElement& top = cpu.children[0];
  EXPECT_EQ(top.Attribute("busid"), "0000:01:00.0") << "the root port and the downstream ports are not NCCL levels";
  EXPECT_EQ(top.Attribute("class"), "0x060400");
  EXPECT_EQ(top.Attribute("link_speed"), "16.0 GT/s PCIe");
  EXPECT_EQ(top.Attribute("link_width"), "16");
  ASSERT_EQ(top.children.size(), 2u) << *xml;
  EXPECT_EQ(top.children[0].Attribute("busid"), "0000:03:00.0");
  EXPECT_EQ(top.children[0].Attribute("link_speed"), "8.0 GT/s PCIe");
  EXPECT_EQ(top.children[1].Attribute("busid"), "0000:08:00.0");
  EXPECT_EQ(top.children[0].children.size(), 3u) << "two GPUs and mlx5_0";

  testing::NcclTree tree = testing::TreeFromTopologyXml(*root);
  auto path = [&](const char* a, const char* b) { return testing::NcclPathName(tree.Path(*tree.Find(a), *tree.Find(b))); };
  EXPECT_STREQ(path("0000:05:00.0", "0000:06:00.0"), "PIX");
  EXPECT_STREQ(path("0000:05:00.0", "0000:07:00.0"), "PIX");
  EXPECT_STREQ(path("0000:05:00.0", "0000:0a:00.0"), "PXB");
  EXPECT_STREQ(path("0000:05:00.0", "0000:0b:00.0"), "PXB");
  EXPECT_STREQ(path("0000:0a:00.0", "0000:0b:00.0"), "PIX");
}

// A Broadcom PEX Gen4 switch shows two levels in sysfs but switches as one:
// NCCL flattens it by its PCI ids (topo.cc, ncclTopoFlattenBcmSwitches), so
// the file carries them and the pair across its sub switches is PIX.
TEST(NcclTopoXml, BroadcomSwitchesCarryTheIdsNcclFlattensThemBy) {
  HostLayout layout = TwoLevelSwitchLayout();
  for (PciBridge& b : layout.pci_bridges) {
    b.vendor_id = 0x1000, b.device_id = 0xc010, b.subvendor_id = 0x1000, b.subdevice_id = 0xa064;
    if (b.pci_bus_id == "0000:01:00.0") b.subdevice_id = 0xa000;
  }
  Result<std::string> xml = FormatNcclTopoXml(layout, {}, FabricKind::kTcp);
  ASSERT_TRUE(xml.ok());
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error();
  const XmlElement& top = root->children.at(0).children.at(0);
  EXPECT_EQ(top.Attribute("vendor"), "0x1000");
  EXPECT_EQ(top.Attribute("device"), "0xc010");
  EXPECT_EQ(top.Attribute("subsystem_vendor"), "0x1000");
  EXPECT_EQ(top.Attribute("subsystem_device"), "0xa000");
  testing::NcclTree tree = testing::TreeFromTopologyXml(*root);
  EXPECT_STREQ(testing::NcclPathName(tree.Path(*tree.Find("0000:05:00.0"), *tree.Find("0000:0a:00.0"))), "PIX");
  // Without ids (hwloc did not say) nothing is written and nothing flattened.
  Result<std::string> plain = FormatNcclTopoXml(TwoLevelSwitchLayout(), {}, FabricKind::kTcp);
  EXPECT_EQ(plain->find("vendor=\"0x1000\""), std::string::npos);
}

// A container that sees GPUs 4-7 of an 8-GPU machine: its layout lists
// those four. The file names them by bus id only; NCCL numbers them (NVML
// says 0-3 inside the container), so nothing can point at the wrong GPU.
TEST(NcclTopoXml, AContainerWithGpusFourToSevenGetsNoDeviceNumbers) {
  HostLayout layout;
  layout.architecture = "x86_64";
  layout.numa_nodes = {{0, 0, {0, 1}, 0}, {1, 1, {2, 3}, 0}};
  const char* ids[] = {"0000:b7:00.0", "0000:bd:00.0", "0000:e0:00.0", "0000:e5:00.0"};
  const char* switches[] = {"0000:b5:00.0", "0000:b5:00.0", "0000:de:00.0", "0000:de:00.0"};
  const char* ports[] = {"0000:b6:00.0", "0000:b6:04.0", "0000:df:00.0", "0000:df:04.0"};
  layout.pci_bridges = {{"0000:b4:00.0", "", PcieLink{31.5}}, {"0000:b5:00.0", "0000:b4:00.0", PcieLink{31.5}},
                        {"0000:dd:00.0", "", PcieLink{31.5}}, {"0000:de:00.0", "0000:dd:00.0", PcieLink{31.5}}};
  for (int i = 0; i < 4; ++i) {
    layout.pci_bridges.push_back({ports[i], switches[i], PcieLink{31.5}});
    Gpu g{ids[i], "nvidia", "A100", {"cuda" + std::to_string(i)}, 1, PcieLink{31.5}, {}};
    g.pci_parent = ports[i];
    layout.gpus.push_back(g);
  }
  Result<std::string> xml = FormatNcclTopoXml(layout, {}, FabricKind::kTcp);
  ASSERT_TRUE(xml.ok());
  EXPECT_EQ(xml->find("dev="), std::string::npos) << *xml;
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error();
  std::vector<const XmlElement*> gpus;
  root->Collect("gpu", gpus);
  EXPECT_EQ(gpus.size(), 4u);
  ASSERT_EQ(root->children.size(), 2u);
  EXPECT_TRUE(root->children[0].children.empty()) << "NUMA 0 has none of them";
  ASSERT_EQ(root->children[1].children.size(), 2u) << *xml;
  EXPECT_EQ(root->children[1].children[0].Attribute("busid"), "0000:b5:00.0");
  EXPECT_EQ(root->children[1].children[1].Attribute("busid"), "0000:de:00.0");
}

// NCCL's rules for the values written (xml.cc, topo.cc), as tests.
TEST(NcclTopoXml, ValuesStayInsideWhatNcclReads) {
  // link_speed: only strings of topo.cc's kvDictPciGen are understood; any
  // other falls back to 8 GT/s.
  const std::set<std::string> kNcclSpeeds = {"2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe",
                                             "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
  for (double gbs = 0.1; gbs < 300; gbs *= 1.07) EXPECT_TRUE(kNcclSpeeds.count(PcieLinkAttributes(gbs).first)) << gbs;
  // affinity: at most 253 characters, else left out (NCCL reads sysfs).
  auto affinity_of = [](int top_cpu) {
    HostLayout layout;
    layout.numa_nodes = {{0, 0, {0, top_cpu}, 0}};
    Result<std::string> xml = FormatNcclTopoXml(layout, {}, FabricKind::kTcp);
    NcclXmlReader reader;
    std::optional<XmlElement> root = reader.Parse(*xml);
    EXPECT_TRUE(root) << reader.error();
    return root ? root->children.at(0).Attribute("affinity") : std::nullopt;
  };
  std::optional<std::string> widest = affinity_of(28 * 32 - 1);  // 28 groups: 251 characters
  ASSERT_TRUE(widest);
  EXPECT_EQ(widest->size(), 251u);
  EXPECT_FALSE(affinity_of(28 * 32)) << "29 groups are 260 characters";
  // A device name NCCL's parser would cut or misread is refused.
  std::vector<ComputePort> quoted = {{"mlx5\"0", 1, std::nullopt, std::nullopt, ""}};
  EXPECT_FALSE(FormatNcclTopoXml(HostLayout{}, quoted, FabricKind::kRoce).ok());
  std::vector<ComputePort> long_name = {{std::string(254, 'm'), 1, std::nullopt, std::nullopt, ""}};
  EXPECT_FALSE(FormatNcclTopoXml(HostLayout{}, long_name, FabricKind::kRoce).ok());
  // Every <pci> has the attributes topo.cc requires of a switch it keeps
  // (class, busid, and where known link_speed/link_width).
  Result<std::string> xml = FormatNcclTopoXml(TwoLevelSwitchLayout(), {}, FabricKind::kTcp);
  NcclXmlReader reader;
  std::optional<XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root);
  std::vector<const XmlElement*> pcis;
  root->Collect("pci", pcis);
  EXPECT_EQ(pcis.size(), 6u) << *xml;
  for (const XmlElement* pci : pcis) {
    EXPECT_TRUE(pci->Attribute("busid") && pci->Attribute("class"));
    EXPECT_TRUE(pci->Attribute("link_speed") && pci->Attribute("link_width")) << *pci->Attribute("busid");
  }
}

}  // namespace
}  // namespace topolaunch
