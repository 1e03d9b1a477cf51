// env against real parts: a fake sysfs tree read by the real reader, real
// machines' hwloc layouts, this machine's routing table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "discover/hwloc_layout_source.h"
#include "env/compute_ports.h"
#include "env/env_test_util.h"
#include "env/nccl_topo_xml.h"
#include "env/nccl_xml_reader.h"
#include "env/rdma_sysfs.h"
#include "env/route_lookup.h"
#include "env/socket_stripes.h"
#include "support/test_paths.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

namespace fs = std::filesystem;
using testing::ComputeWithBuiltin;
using testing::Values;
using testing::FakePort;

TEST(EnvSysfs, RoceFromAFakeSysfsTree) {
  testing::TempDir dir;
  fs::path root = fs::path(dir.path()) / "class" / "infiniband";
  const std::string v4 = "0000:0000:0000:0000:0000:ffff:0a00:0105";
  const std::string ll = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001";
  const std::string zero = "0000:0000:0000:0000:0000:0000:0000:0000";
  for (const char* dev : {"mlx5_0", "mlx5_1"})
    FakePort(root, dev, "Ethernet", "4: ACTIVE",
             {{0, ll, "IB/RoCE v1"}, {1, ll, "RoCE v2"}, {2, v4, "IB/RoCE v1"}, {3, v4, "RoCE v2"}, {4, zero, ""}});
  FakePort(root, "mlx5_2", "Ethernet", "1: DOWN", {{0, ll, "IB/RoCE v1"}});
  FakePort(root, "mlx5_10", "InfiniBand", "1: DOWN", {{0, ll, "IB/RoCE v1"}});

  Result<std::vector<RdmaPort>> ports = ReadRdmaPorts(root.string());
  ASSERT_TRUE(ports.ok()) << ports.error().Message();
  ASSERT_EQ(ports->size(), 4u);
  EXPECT_EQ((*ports)[0].device, "mlx5_0");
  EXPECT_EQ((*ports)[3].device, "mlx5_10");  // natural order
  EXPECT_EQ((*ports)[0].state, "ACTIVE");
  EXPECT_EQ((*ports)[3].state, "DOWN");
  ASSERT_EQ((*ports)[0].gids.size(), 4u);  // the all-zero entry is not populated
  EXPECT_EQ((*ports)[0].gids[3], (GidEntry{3, v4, "RoCE v2", "ens1f0"}));

  Topology topology;
  AttachLayout(topology, "roce01", HostLayout{});
  EnvFacts facts;
  facts.topology = &topology;
  facts.host = "roce01";
  facts.rdma_ports = *ports;
  facts.socket_route = SocketRoute{"eno1", "test"};
  ASSERT_EQ(DetectFabricKind(facts), FabricKind::kRoce);
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kRoce);
  EXPECT_EQ(Values(env), (std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"},
                                                              {"NCCL_IB_GID_INDEX", "3"},
                                                              {"NCCL_SOCKET_IFNAME", "=eno1"},
                                                              {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                              {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
                                                              {"NCCL_DEBUG", "WARN"}}));
  Result<std::vector<RdmaPort>> none = ReadRdmaPorts((fs::path(dir.path()) / "absent").string());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

struct RealHost {
  const char* file;
  const char* host;
  std::vector<std::string> hcas;  // cabled into the fabric, one leaf each (rails)
  const char* expected_ib_hca;
  size_t expected_gpus;
};

TEST(EnvRealLayouts, EnvAndNcclTopologyFromRealMachines) {
  const std::string data = testing::TestDataDir();
  const RealHost hosts[] = {
      {"jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml", "jwb0004", {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"},
       "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1", 4},
      // Two EDR HCAs, but only mlx5_0 cabled into this fabric: mlx5_1 must be left out.
      {"jsc-juwels-cluster-gpu-2xGold6148-4xV100-plx-2xEDR.xml", "jwc09n003", {"mlx5_0"}, "=mlx5_0:1", 4},
      {"deep-est-esb01-1xSilver4215-1xV100-mlx5-edr.xml", "dp-esb01", {"mlx5_0"}, "=mlx5_0:1", 1},
      {"hwloc-plafrim-mirage004-sl390s-2x6core-3xM2070-mlx4.xml", "mirage004", {"mlx4_0"}, "=mlx4_0:1", 3},
  };
  for (const RealHost& real : hosts) {
    SCOPED_TRACE(real.file);
    Result<HostLayout> layout = HwlocLayoutSource::FromXmlFile(data + "/hwloc/" + real.file).LoadLayout();
    ASSERT_TRUE(layout.ok()) << layout.error().Message();
    testing::HandTopology t;
    Guid leaf = 0x100;
    for (const std::string& hca : real.hcas) {
      ++leaf;
      t.Switch(leaf, "rail-" + hca, 1).Hca(real.host, leaf + 0x1000, hca, leaf);
    }
    Topology topology = t.Build();
    AttachLayout(topology, real.host, *layout);
    EnvFacts facts;
    facts.topology = &topology;
    facts.host = real.host;
    EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kInfiniband);
    EXPECT_EQ(Values(env)["NCCL_IB_HCA"], real.expected_ib_hca);
    // One leaf per rail and nothing above: rails joined nowhere keep every
    // ring on its rail; one NIC has nothing to cross.
    if (real.hcas.size() > 1) EXPECT_EQ(Values(env)["NCCL_CROSS_NIC"], "0");
    else EXPECT_EQ(Values(env).count("NCCL_CROSS_NIC"), 0u);

    std::vector<ComputePort> ports = ComputePortsFor(facts, FabricKind::kInfiniband, nullptr);
    Result<std::string> xml = FormatNcclTopoXml(*layout, ports, FabricKind::kInfiniband);
    ASSERT_TRUE(xml.ok());
    testing::NcclXmlReader reader;
    std::optional<testing::XmlElement> root = reader.Parse(*xml);
    ASSERT_TRUE(root) << reader.error() << "\n" << *xml;
    EXPECT_EQ(root->children.size(), std::max<size_t>(layout->numa_nodes.size(), 1));
    std::vector<const testing::XmlElement*> gpus, nets, pcis;
    root->Collect("gpu", gpus);
    root->Collect("net", nets);
    root->Collect("pci", pcis);
    EXPECT_EQ(gpus.size(), real.expected_gpus);
    ASSERT_EQ(nets.size(), real.hcas.size());
    std::set<std::string> net_names;  // in NUMA order in the file
    for (const testing::XmlElement* net : nets) net_names.insert(*net->Attribute("name"));
    EXPECT_EQ(net_names, std::set<std::string>(real.hcas.begin(), real.hcas.end()));
    for (const testing::XmlElement* pci : pcis) {
      std::optional<std::string> busid = pci->Attribute("busid");
      ASSERT_TRUE(busid);
      EXPECT_EQ(busid->size(), 12u) << *busid;
      EXPECT_TRUE(pci->Attribute("class"));
    }
  }
}

TEST(EnvRealLayouts, NoIoLayoutGivesCpusOnly) {
  Result<HostLayout> layout =
      HwlocLayoutSource::FromXmlFile(testing::TestDataDir() + "/hwloc/quanta-gh200-1socket-no-io.xml").LoadLayout();
  ASSERT_TRUE(layout.ok()) << layout.error().Message();
  Result<std::string> xml = FormatNcclTopoXml(*layout, {}, FabricKind::kTcp);
  ASSERT_TRUE(xml.ok());
  testing::NcclXmlReader reader;
  std::optional<testing::XmlElement> root = reader.Parse(*xml);
  ASSERT_TRUE(root) << reader.error();
  ASSERT_EQ(root->children.size(), 1u);
  EXPECT_EQ(root->children[0].Attribute("arch"), "arm64");
  EXPECT_TRUE(root->children[0].children.empty());
}

TEST(EnvRoutes, ThisMachineNeverAnswersLoopback) {
  std::unique_ptr<RouteLookup> routes = MakeKernelRouteLookup();
  for (const char* host : {"127.0.0.1", "localhost"}) {
    Result<SocketRoute> route = routes->RouteToward(host);
    if (route.ok()) EXPECT_NE(route->interface, "lo") << host << ": " << route->detail;
    else EXPECT_EQ(route.error().code, ErrorCode::kUnavailable);
  }
  Result<SocketRoute> bad = routes->RouteToward("no-such-host.invalid");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kUnavailable);
}

// The interfaces the kernel lists: up, IPv4 with a prefix, never loopback,
// and the one the default route leaves through among them.
TEST(EnvRoutes, InterfacesAreTheUpIpv4OnesWithoutLoopback) {
  std::unique_ptr<RouteLookup> routes = MakeKernelRouteLookup();
  std::vector<SocketInterface> interfaces = routes->Interfaces();
  for (const SocketInterface& i : interfaces) {
    EXPECT_NE(i.name, "lo");
    EXPECT_TRUE(SubnetOf(i.address)) << i.address << ": the preflight reply would refuse it";
    EXPECT_FALSE(i.address.starts_with("127.")) << i.name;
    if (i.speed_mbps) {
      EXPECT_GT(*i.speed_mbps, 0);
    }
  }
  Result<SocketRoute> outward = routes->RouteToward("192.0.2.1");  // TEST-NET-1: the default route, if any
  if (!outward.ok()) GTEST_SKIP() << "no default route here: " << outward.error().Message();
  bool listed = false;
  for (const SocketInterface& i : interfaces) listed = listed || i.name == outward->interface;
  EXPECT_TRUE(listed) << outward->interface << " routes outward but is not listed";
}

}  // namespace
}  // namespace topolaunch
