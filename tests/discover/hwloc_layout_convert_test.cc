// The classification rules on hand-made raw topologies: the cases the shared
// XML files do not reach (BMC VGA by link width, AMD Instinct class 0380,
// NVSwitch, RDMA devices off PCI).
#include "discover/hwloc_layout_convert.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

RawPciFunction Pci(unsigned bus, unsigned class_id, unsigned vendor, unsigned device, double link,
                   std::vector<RawBridge> bridges, int package) {
  RawPciFunction p;
  p.bus = bus, p.class_id = class_id, p.vendor_id = vendor, p.device_id = device;
  p.link_gbytes_per_s = link;
  p.bridges = std::move(bridges);
  p.numa = package;
  p.package = package;
  return p;
}

RawOsDevice Os(std::string name, RawOsDeviceType type, int pci, std::string subtype = "") {
  RawOsDevice d;
  d.name = std::move(name);
  d.type = type;
  d.pci = pci;
  d.subtype = std::move(subtype);
  return d;
}

// Host bridge 1 holds a PCIe switch (bridge 2) with a GPU and a NIC, plus a
// root port (3) with another GPU; host bridge 10 on package 1 has the rest.
RawHostTopology Sample() {
  RawHostTopology raw;
  raw.packages = 2;
  std::vector<RawBridge> sw = {{1, true}, {2, false}, {4, false}};
  std::vector<RawBridge> sw2 = {{1, true}, {2, false}, {5, false}};
  raw.pci = {
      Pci(0x07, 0x0302, 0x10de, 0x2330, 31.5, sw, 0),                         // 0: H100 behind the switch
      Pci(0x08, 0x0207, 0x15b3, 0x1021, 31.5, sw2, 0),                        // 1: ConnectX-7 behind the same switch
      Pci(0x20, 0x0380, 0x1002, 0x740c, 31.5, {{1, true}, {3, false}}, 0),    // 2: MI250X, class 0380
      Pci(0x30, 0x0300, 0x10de, 0x1eb8, 0.25, {{1, true}, {6, false}}, 0),    // 3: x1 VGA: management
      Pci(0x31, 0x0300, 0x1002, 0x515e, 0, {{1, true}, {7, false}}, 0),       // 4: ES1000, link unknown
      Pci(0x90, 0x0680, 0x10de, 0x22a3, 31.5, {{10, true}, {11, false}}, 1),  // 5: NVSwitch (bridge class)
      Pci(0x91, 0x0302, 0x10de, 0x2330, 31.5, {{10, true}, {12, false}}, 1),  // 6: H100 on socket 1
      Pci(0x92, 0x0200, 0x8086, 0x1521, 0, {{10, true}, {13, false}}, 1),     // 7: Intel Ethernet
      Pci(0x93, 0x0302, 0x1a03, 0x2000, 0, {{10, true}, {14, false}}, 1),     // 8: not NVIDIA/AMD
  };
  raw.os_devices = {
      Os("cuda0", RawOsDeviceType::kCoProc, 0, "CUDA"), Os("card1", RawOsDeviceType::kGpu, 0),
      Os("mlx5_0", RawOsDeviceType::kOpenFabrics, 1),   Os("ib0", RawOsDeviceType::kNetwork, 1),
      Os("rsmi0", RawOsDeviceType::kGpu, 2, "RSMI"),    Os("eno1", RawOsDeviceType::kNetwork, 7),
      Os("rxe0", RawOsDeviceType::kOpenFabrics, -1),    Os("mlx5_10", RawOsDeviceType::kOpenFabrics, -1),
  };
  raw.os_devices[6].package = 1;  // soft RoCE over a socket-1 port: no PCI function of its own
  return raw;
}

TEST(ConvertRawTopology, GpusByRule) {
  HostLayout l = ConvertRawTopology(Sample(), "test");
  std::vector<std::string> ids;
  for (const Gpu& g : l.gpus) ids.push_back(g.pci_bus_id + " " + g.vendor);
  EXPECT_EQ(ids, (std::vector<std::string>{"0000:07:00.0 nvidia", "0000:20:00.0 amd", "0000:91:00.0 nvidia"}));
  EXPECT_EQ(l.gpus[0].os_devices, std::vector<std::string>{"cuda0"}) << "DRM card1 is not a compute handle";
  EXPECT_EQ(l.gpus[1].os_devices, std::vector<std::string>{"rsmi0"});
  ASSERT_TRUE(l.gpus[0].link.has_value());
  EXPECT_EQ(l.gpus[0].link->gbytes_per_s, 31.5);
}

TEST(ConvertRawTopology, AComputeDriverOverridesTheManagementVgaRule) {
  RawHostTopology raw = Sample();
  raw.os_devices.push_back(Os("nvml9", RawOsDeviceType::kGpu, 3, "NVML"));
  HostLayout l = ConvertRawTopology(raw, "test");
  ASSERT_EQ(l.gpus.size(), 4u);
  EXPECT_EQ(l.gpus[2].pci_bus_id, "0000:30:00.0");
}

TEST(ConvertRawTopology, NicsAndTheirNetdevs) {
  HostLayout l = ConvertRawTopology(Sample(), "test");
  std::vector<std::string> names;
  for (const Nic& n : l.nics) names.push_back(n.name + ":" + n.kind);
  EXPECT_EQ(names, (std::vector<std::string>{"eno1:network", "mlx5_0:openfabrics", "mlx5_10:openfabrics",
                                             "rxe0:openfabrics"}));
  EXPECT_EQ(l.nics[1].netdevs, std::vector<std::string>{"ib0"});
  EXPECT_EQ(l.nics[3].pci_bus_id, "");
}

TEST(ConvertRawTopology, PathsFromClosestToFarthest) {
  HostLayout l = ConvertRawTopology(Sample(), "test");
  ASSERT_EQ(l.gpu_nic_paths.size(), 9u);  // 3 GPUs x 3 RDMA NICs
  auto relation = [&](const std::string& gpu, const std::string& nic) {
    for (const GpuNicPath& p : l.gpu_nic_paths)
      if (p.gpu == gpu && p.nic == nic) return std::string(PcieRelationName(p.relation));
    return std::string("missing");
  };
  EXPECT_EQ(relation("0000:07:00.0", "mlx5_0"), "same_pcie_switch");
  EXPECT_EQ(relation("0000:20:00.0", "mlx5_0"), "same_host_bridge");
  EXPECT_EQ(relation("0000:91:00.0", "mlx5_0"), "across_sockets");
  EXPECT_EQ(relation("0000:91:00.0", "rxe0"), "same_socket");
  EXPECT_EQ(relation("0000:07:00.0", "rxe0"), "across_sockets");
  EXPECT_EQ(relation("0000:07:00.0", "mlx5_10"), "unknown");
}

// The bridges above GPUs and NICs are kept with their parents: a host
// bridge, a root port, a switch (upstream 01:00.0, downstream 02:00.0 and
// 02:04.0) with a GPU and a NIC, and a GPU on a root port of its own.
TEST(ConvertRawTopology, KeepsTheBridgesAboveGpusAndNics) {
  RawHostTopology raw;
  raw.packages = 1;
  RawBridge host{1, true, "", 0}, root{2, false, "0000:00:01.0", 31.5}, up{3, false, "0000:01:00.0", 31.5},
      left{4, false, "0000:02:00.0", 15.75}, right{5, false, "0000:02:04.0", 15.75}, alone{6, false, "0000:00:02.0", 0};
  up.vendor_id = 0x10b5, up.device_id = 0x8747, up.subvendor_id = 0x10b5, up.subdevice_id = 0x8747;  // a PLX PEX 8747
  raw.pci = {Pci(0x03, 0x0302, 0x10de, 0x20b0, 15.75, {host, root, up, left}, 0),
             Pci(0x04, 0x0207, 0x15b3, 0x101b, 15.75, {host, root, up, right}, 0),
             Pci(0x81, 0x0302, 0x10de, 0x20b0, 31.5, {host, alone}, 0)};
  raw.os_devices = {Os("cuda0", RawOsDeviceType::kCoProc, 0, "CUDA"), Os("mlx5_0", RawOsDeviceType::kOpenFabrics, 1),
                    Os("cuda1", RawOsDeviceType::kCoProc, 2, "CUDA")};
  HostLayout l = ConvertRawTopology(raw, "test");
  ASSERT_EQ(l.gpus.size(), 2u);
  EXPECT_EQ(l.gpus[0].pci_parent, "0000:02:00.0");
  EXPECT_EQ(l.gpus[1].pci_parent, "0000:00:02.0");
  ASSERT_EQ(l.nics.size(), 1u);
  EXPECT_EQ(l.nics[0].pci_parent, "0000:02:04.0");
  std::vector<std::string> bridges;
  for (const PciBridge& b : l.pci_bridges)
    bridges.push_back(b.pci_bus_id + "<" + b.parent + (b.link ? "@" + std::to_string(b.link->gbytes_per_s).substr(0, 5) : ""));
  EXPECT_EQ(bridges, (std::vector<std::string>{"0000:00:01.0<@31.50", "0000:00:02.0<", "0000:01:00.0<0000:00:01.0@31.50",
                                               "0000:02:00.0<0000:01:00.0@15.75", "0000:02:04.0<0000:01:00.0@15.75"}));
  EXPECT_EQ(l.pci_bridges[2].vendor_id, 0x10b5u);
  EXPECT_EQ(l.pci_bridges[2].subdevice_id, 0x8747u);
  EXPECT_EQ(l.pci_bridges[0].vendor_id, 0u) << "unknown stays 0";
}

TEST(ConvertRawTopology, NodeGuidForms) {
  RawHostTopology raw = Sample();
  raw.os_devices[2].node_guid = "0800:3800:01c0:91ec";
  raw.os_devices[6].node_guid = "0000:0000:0000:0000";
  raw.os_devices[7].node_guid = "garbage";
  HostLayout l = ConvertRawTopology(raw, "test");
  EXPECT_EQ(l.nics[1].node_guid, 0x0800380001c091ecull);
  EXPECT_EQ(l.nics[2].node_guid, std::nullopt);
  EXPECT_EQ(l.nics[3].node_guid, std::nullopt);
}

}  // namespace
}  // namespace topolaunch
