// Which ports are compute ports: GPU locality, several InfiniBand subnets,
// front-end RoCE NICs.
#include "env/compute_ports.h"

#include <gtest/gtest.h>

#include "env/env_test_util.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::HandTopology;

Nic Rdma(const std::string& name, const std::string& bus) {
  return {name, "openfabrics", bus, {}, std::nullopt, 0, std::nullopt};
}

// Two GPUs, each with mlx5_<i> under its PCIe switch; mlx5_2 on the host
// bridge only (a storage or front-end NIC, as in NVIDIA's reference designs).
HostLayout GpuServer() {
  HostLayout layout;
  layout.gpus = {Gpu{"0000:18:00.0", "nvidia", "H100", {}, 0, std::nullopt, {}},
                 Gpu{"0000:9a:00.0", "nvidia", "H100", {}, 1, std::nullopt, {}}};
  layout.nics = {Rdma("mlx5_0", "0000:17:00.0"), Rdma("mlx5_1", "0000:99:00.0"), Rdma("mlx5_2", "0000:05:00.0")};
  for (const Gpu& gpu : layout.gpus)
    for (const Nic& nic : layout.nics) {
      bool under = (gpu.pci_bus_id == "0000:18:00.0" && nic.name == "mlx5_0") ||
                   (gpu.pci_bus_id == "0000:9a:00.0" && nic.name == "mlx5_1");
      layout.gpu_nic_paths.push_back(
          {gpu.pci_bus_id, nic.name, under ? PcieRelation::kSamePcieSwitch : PcieRelation::kSameHostBridge});
    }
  return layout;
}

EnvFacts Facts(const Topology& topology, const std::string& host, std::vector<RdmaPort> sysfs) {
  EnvFacts facts;
  facts.topology = &topology;
  facts.host = host;
  facts.rdma_ports = std::move(sysfs);
  return facts;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

RdmaPort Port(const std::string& device, const std::string& link_layer, const std::string& state = "ACTIVE") {
  return {device, 1, link_layer, state, {}};
}

TEST(ComputePorts, RoceFrontEndNicIsLeftOutWhenTheGpusNicsAreKnown) {
  Topology topology;
  AttachLayout(topology, "r01", GpuServer());
  EnvFacts facts = Facts(topology, "r01", {Port("mlx5_0", "Ethernet"), Port("mlx5_1", "Ethernet"), Port("mlx5_2", "Ethernet")});
  std::vector<std::string> left_out;
  std::vector<ComputePort> ports = ComputePortsFor(facts, FabricKind::kRoce, &left_out);
  EXPECT_EQ(FormatIbHca(ports), "=mlx5_0:1,mlx5_1:1");
  EXPECT_NE(Joined(left_out).find("mlx5_2:1: no GPU shares its PCIe switch"), std::string::npos) << Joined(left_out);

  Topology no_layout;  // nothing tells the NICs apart: every active port stays
  AttachLayout(no_layout, "r01", HostLayout{});
  EnvFacts bare = Facts(no_layout, "r01", *facts.rdma_ports);
  EXPECT_EQ(FormatIbHca(ComputePortsFor(bare, FabricKind::kRoce, nullptr)), "=mlx5_0:1,mlx5_1:1,mlx5_2:1");
}

Topology OneSubnetWalked() {
  HandTopology t;  // gpu01's mlx5_0 on the walked subnet; mlx5_1 is on the rail-1 subnet
  t.Switch(0x10, "rail0-leaf", 1).Hca("gpu01", 0xa1, "mlx5_0", 0x10).Hca("gpu02", 0xa2, "mlx5_0", 0x10);
  Topology topology = t.Build();
  AttachLayout(topology, "gpu01", GpuServer());
  return topology;
}

TEST(ComputePorts, APortOnASecondSubnetUnderAGpuSwitchIsKept) {
  Topology topology = OneSubnetWalked();
  EnvFacts facts = Facts(topology, "gpu01", {Port("mlx5_0", "InfiniBand"), Port("mlx5_1", "InfiniBand"),
                                             Port("mlx5_2", "InfiniBand")});
  std::vector<std::string> left_out;
  std::vector<ComputePort> ports = ComputePortsFor(facts, FabricKind::kInfiniband, &left_out);
  EXPECT_EQ(FormatIbHca(ports), "=mlx5_0:1,mlx5_1:1");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_FALSE(ports[0].off_walk);
  EXPECT_TRUE(ports[1].off_walk);
  // mlx5_2, the storage HCA on a third subnet, stays out and says why.
  EXPECT_NE(Joined(left_out).find("mlx5_2:1: active on an InfiniBand subnet the walk did not cover"),
            std::string::npos)
      << Joined(left_out);

  EnvOutcome env = testing::ComputeWithBuiltin(facts, FabricKind::kInfiniband);
  EXPECT_EQ(testing::Values(env).at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
  std::string reason;
  for (const EnvVariable& v : env.variables)
    if (v.name == "NCCL_IB_HCA") reason = v.reason;
  EXPECT_NE(reason.find("1 cabled into the discovered fabric, 1 active on another InfiniBand subnet"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("hosts differ"), std::string::npos) << reason;  // gpu02 matches the walked part
}

TEST(ComputePorts, ASecondSubnetWithoutGpuLocalityIsLeftOutWithTheFix) {
  HandTopology t;
  t.Switch(0x10, "leaf", 1).Hca("gpu01", 0xa1, "mlx5_0", 0x10);
  Topology topology = t.Build();
  EnvFacts facts = Facts(topology, "gpu01", {Port("mlx5_0", "InfiniBand"), Port("mlx5_1", "InfiniBand"),
                                             Port("mlx5_3", "InfiniBand", "DOWN")});
  std::vector<std::string> left_out;
  EXPECT_EQ(FormatIbHca(ComputePortsFor(facts, FabricKind::kInfiniband, &left_out)), "=mlx5_0:1");
  ASSERT_EQ(left_out.size(), 1u) << Joined(left_out);
  EXPECT_NE(left_out[0].find("another --fabric"), std::string::npos) << left_out[0];
}

TEST(ComputePorts, AStorageHcaOnTheComputeFabricIsLeftOutByLocality) {
  HandTopology t;  // both HCAs cabled into the walked fabric; only mlx5_0 sits under a GPU
  t.Switch(0x10, "leaf", 1).Hca("gpu01", 0xa1, "mlx5_0", 0x10).Hca("gpu01", 0xa3, "mlx5_2", 0x10);
  Topology topology = t.Build();
  AttachLayout(topology, "gpu01", GpuServer());
  std::vector<std::string> left_out;
  EXPECT_EQ(FormatIbHca(InfinibandComputePorts(*topology.FindHost("gpu01"), nullptr, &left_out)), "=mlx5_0:1");
  EXPECT_NE(Joined(left_out).find("mlx5_2:1: no GPU shares its PCIe switch"), std::string::npos) << Joined(left_out);
}

}  // namespace
}  // namespace topolaunch
