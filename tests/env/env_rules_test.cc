// The emitted set per fabric, value by value.
#include "env/env_rules.h"

#include <gtest/gtest.h>

#include "env/compute_ports.h"
#include "env/env_test_util.h"
#include "support/nvlink_racks.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::ComputeWithBuiltin;
using testing::HandTopology;
using testing::Values;
using Map = std::map<std::string, std::string>;

const Map kCommon = {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}, {"NCCL_DEBUG", "WARN"}};

Map With(Map extra) {
  Map out = kCommon;
  out.insert(extra.begin(), extra.end());
  return out;
}

EnvFacts FactsFor(const Topology& topology, const std::string& host) {
  EnvFacts facts;
  facts.topology = &topology;
  facts.host = host;
  facts.socket_route = SocketRoute{"ens1f0", "route to 10.0.0.1 (node01) via ens1f0"};
  return facts;
}

std::string ReasonOf(const EnvOutcome& env, const std::string& name) {
  for (const EnvVariable& v : env.variables) if (v.name == name) return v.reason;
  for (const EnvLeftUnset& u : env.unset) if (u.name == name) return u.reason;
  return "<absent>";
}

Topology SingleRail() {
  HandTopology t;
  t.Switch(0x10, "leaf01", 1).Switch(0x11, "leaf02", 1).Switch(0x20, "spine01", 2);
  t.Hca("node01", 0xa1, "mlx5_0", 0x10).Hca("node02", 0xa2, "mlx5_0", 0x10).Hca("node03", 0xa3, "mlx5_0", 0x11);
  t.Cable(0x10, 0x20).Cable(0x11, 0x20);
  return t.Build();
}

TEST(EnvRules, SingleRailFatTree) {
  Topology topology = SingleRail();
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "node02"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_CROSS_NIC").find("nothing to cross"), std::string::npos);
  // Not set unless asked, and --explain says when asking is worth it.
  EXPECT_EQ(Values(env).count("NCCL_TOPO_FILE"), 0u);
  EXPECT_NE(ReasonOf(env, "NCCL_TOPO_FILE").find("bare metal"), std::string::npos);
  EXPECT_NE(ReasonOf(env, "NCCL_TOPO_FILE").find("--nccl-topo FILE where the tree is hidden or virtual"), std::string::npos);
  EXPECT_TRUE(env.warnings.empty());
}

TEST(EnvRules, RailOptimized) {
  Topology topology = testing::MultiRailTopology();
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "dgx02"), FabricKind::kInfiniband);
  // The two rails' spines meet nowhere: a ring that changed rails could
  // not even connect, so NCCL_CROSS_NIC=0 keeps every ring on its rail.
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}, {"NCCL_CROSS_NIC", "0"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_CROSS_NIC").find("rails mlx5_0:1 and mlx5_1:1 are not joined at all"), std::string::npos)
      << ReasonOf(env, "NCCL_CROSS_NIC");
  // dgx06's mlx5_0 is unplugged: its value differs and says why.
  EnvOutcome dgx06 = ComputeWithBuiltin(FactsFor(topology, "dgx06"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(dgx06)["NCCL_IB_HCA"], "=mlx5_1:1");
  EXPECT_NE(ReasonOf(dgx06, "NCCL_IB_HCA").find("mlx5_0:1: not cabled to a switch"), std::string::npos);
  EXPECT_NE(ReasonOf(env, "NCCL_IB_HCA").find("hosts differ (dgx06: =mlx5_1:1)"), std::string::npos);
}

TEST(EnvRules, RailsJoinedAtTheSpinesLeaveCrossNicToNccl) {
  // NCCL's default already keeps rings on rails: NCCL_CROSS_NIC=0 would
  // only forbid crossing, and since 2.29 for the whole communicator.
  Topology topology = testing::MultiRailTopology();
  topology.switches.push_back({0x1020, "core", 3, 36});
  PortRef a{0x1010, 30}, b{0x1011, 30};
  for (int i = 0; i < 2; ++i) {
    topology.links.push_back({a, {0x1020, 1 + 2 * i}, "4X", "HDR", "Active"});
    topology.links.push_back({b, {0x1020, 2 + 2 * i}, "4X", "HDR", "Active"});
    ++a.port, ++b.port;
  }
  std::sort(topology.links.begin(), topology.links.end(), [](const TopologyLink& x, const TopologyLink& y) { return x.from < y.from; });
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "dgx02"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env).count("NCCL_CROSS_NIC"), 0u) << ReasonOf(env, "NCCL_CROSS_NIC");
  EXPECT_NE(ReasonOf(env, "NCCL_CROSS_NIC").find("the rails meet at full bandwidth"), std::string::npos)
      << ReasonOf(env, "NCCL_CROSS_NIC");
}

TEST(EnvRules, AllNicsOnOneLeafMayCross) {
  HandTopology t;
  t.Switch(0x10, "leaf01", 1).Hca("node01", 0xa1, "mlx5_0", 0x10).Hca("node01", 0xa2, "mlx5_1", 0x10);
  Topology topology = t.Build();
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "node01"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}, {"NCCL_CROSS_NIC", "1"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_CROSS_NIC").find("leaf01"), std::string::npos);
}

TEST(EnvRules, MixedLeavesLeaveCrossNicToNccl) {
  HandTopology t;
  t.Switch(0x10, "leaf01", 1).Switch(0x11, "leaf02", 1);
  t.Hca("node01", 0xa1, "mlx5_0", 0x10).Hca("node01", 0xa2, "mlx5_1", 0x11).Hca("node02", 0xb1, "mlx5_1", 0x10);
  Topology topology = t.Build();
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "node01"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env).count("NCCL_CROSS_NIC"), 0u);
  EXPECT_NE(ReasonOf(env, "NCCL_CROSS_NIC").find("NCCL's default (2)"), std::string::npos);
}

TEST(EnvRules, StorageHcaOnAnotherSubnetIsLeftOut) {
  // node01 has mlx5_0 on the compute fabric (its CA description carries no
  // device name, so the name comes from hwloc by GUID) and mlx5_1, a storage
  // HCA whose GUID the compute fabric walk never saw.
  HandTopology t;
  t.Switch(0x10, "leaf01", 1).Hca("node01", 0xa1, "", 0x10).Hca("node02", 0xa2, "mlx5_0", 0x10);
  Topology topology = t.Build();
  HostLayout layout;
  layout.nics = {{"eno1", "network", "0000:01:00.0", {"eno1"}, std::nullopt, 0, std::nullopt},
                 {"mlx5_0", "openfabrics", "0000:17:00.0", {"ib0"}, 0xa1, 0, std::nullopt},
                 {"mlx5_1", "openfabrics", "0000:98:00.0", {"ib1"}, 0xc1, 1, std::nullopt}};
  AttachLayout(topology, "node01", layout);
  EnvOutcome env = ComputeWithBuiltin(FactsFor(topology, "node01"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_IB_HCA").find("left out: mlx5_1: not cabled into the discovered fabric"), std::string::npos);
}

TEST(EnvRules, NoFabricFallsBackToTcp) {
  Topology topology;
  AttachLayout(topology, "laptop", HostLayout{});
  EnvFacts facts = FactsFor(topology, "laptop");
  facts.rdma_ports = std::vector<RdmaPort>{};
  ASSERT_EQ(DetectFabricKind(facts), FabricKind::kTcp);
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kTcp);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_DISABLE", "1"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
}

TEST(EnvRules, OnTcpTheInterfacesAsFastAsTheRoutedOneAreNamed) {
  Topology topology;
  AttachLayout(topology, "c01", HostLayout{});
  EnvFacts facts = FactsFor(topology, "c01");
  facts.rdma_ports = std::vector<RdmaPort>{};
  facts.socket_interfaces = {{"docker0", "172.17.0.1/16", 10000},
                             {"ens1f0", "10.0.0.5/16", 100000},
                             {"ens2f0", "10.1.0.5/16", 100000},
                             {"eno1", "192.168.1.5/24", 1000}};
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kTcp);
  EXPECT_EQ(Values(env).at("NCCL_SOCKET_IFNAME"), "=ens1f0");  // one host cannot see what the others reach
  std::string reason = ReasonOf(env, "NCCL_SOCKET_IFNAME");
  EXPECT_NE(reason.find("as fast (100000 Mb/s): ens2f0 (10.1.0.5/16)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("NCCL_SOCKET_IFNAME==ens1f0,ens2f0 in site.env"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("eno1"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("docker0"), std::string::npos) << reason;
  // Where the socket is only the bootstrap (InfiniBand), nothing to say.
  Topology ib = SingleRail();
  EnvFacts on_ib = FactsFor(ib, "node01");
  on_ib.socket_interfaces = facts.socket_interfaces;
  EXPECT_EQ(ReasonOf(ComputeWithBuiltin(on_ib, FabricKind::kInfiniband), "NCCL_SOCKET_IFNAME").find("as fast"),
            std::string::npos);
}

// `run` judged across its nodes which interfaces every node shares a
// subnet on (StripeInterfaces): on TCP the value lists them all.
TEST(EnvRules, OnTcpTheInterfacesRunFoundSharedAreStripedOver) {
  Topology topology;
  AttachLayout(topology, "c01", HostLayout{});
  EnvFacts facts = FactsFor(topology, "c01");
  facts.rdma_ports = std::vector<RdmaPort>{};
  facts.stripe_interfaces = {"ens1f0", "ens2f0"};
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kTcp);
  EXPECT_EQ(Values(env).at("NCCL_SOCKET_IFNAME"), "=ens1f0,ens2f0");
  std::string reason = ReasonOf(env, "NCCL_SOCKET_IFNAME");
  EXPECT_NE(reason.find("then ens2f0: each on a subnet every host of the job has"), std::string::npos) << reason;
  // The bootstrap must leave through the routed interface: a list that does not start with it is not used.
  facts.stripe_interfaces = {"ens2f0", "ens1f0"};
  EXPECT_EQ(Values(ComputeWithBuiltin(facts, FabricKind::kTcp)).at("NCCL_SOCKET_IFNAME"), "=ens1f0");
  // On InfiniBand the socket is only the bootstrap: one interface.
  Topology ib = SingleRail();
  EnvFacts on_ib = FactsFor(ib, "node01");
  on_ib.stripe_interfaces = {"ens1f0", "ens2f0"};
  EXPECT_EQ(Values(ComputeWithBuiltin(on_ib, FabricKind::kInfiniband)).at("NCCL_SOCKET_IFNAME"), "=ens1f0");
}

TEST(EnvRules, SocketInterfaceNeverLoopbackOrDocker) {
  Topology topology = SingleRail();
  for (const char* iface : {"lo", "docker0"}) {
    EnvFacts facts = FactsFor(topology, "node01");
    facts.socket_route = SocketRoute{iface, "test"};
    EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kInfiniband);
    EXPECT_EQ(Values(env).count("NCCL_SOCKET_IFNAME"), 0u) << iface;
    ASSERT_EQ(env.warnings.size(), 1u) << iface;
    EXPECT_NE(env.warnings[0].find("--rank0-host"), std::string::npos);
  }
  EnvFacts unknown = FactsFor(topology, "node01");
  unknown.socket_route.reset();
  unknown.socket_route_problem = "computed on a for b";
  EXPECT_EQ(ReasonOf(ComputeWithBuiltin(unknown, FabricKind::kInfiniband), "NCCL_SOCKET_IFNAME"), "computed on a for b");
}

RdmaPort RocePort(const std::string& device, int ipv4_v2_index) {
  RdmaPort port{device, 1, "Ethernet", "ACTIVE", {}};
  port.gids = {{0, "fe80:0000:0000:0000:0a00:00ff:fe00:0005", "IB/RoCE v1", "ens1f0"},
               {1, "fe80:0000:0000:0000:0a00:00ff:fe00:0005", "RoCE v2", "ens1f0"},
               {2, "0000:0000:0000:0000:0000:ffff:0a00:0005", "IB/RoCE v1", "ens1f0"}};
  port.gids.push_back({ipv4_v2_index, "0000:0000:0000:0000:0000:ffff:0a00:0005", "RoCE v2", "ens1f0"});
  return port;
}

TEST(EnvRules, RoceGidIndexFromTheGidTable) {
  Topology topology;
  AttachLayout(topology, "r01", HostLayout{});
  EnvFacts facts = FactsFor(topology, "r01");
  facts.rdma_ports = {RocePort("mlx5_0", 3), RocePort("mlx5_1", 3), RdmaPort{"mlx5_2", 1, "Ethernet", "DOWN", {}},
                      RdmaPort{"mlx5_3", 1, "InfiniBand", "DOWN", {}}};
  ASSERT_EQ(DetectFabricKind(facts), FabricKind::kRoce);
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kRoce);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}, {"NCCL_IB_GID_INDEX", "3"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_IB_GID_INDEX").find("10.0.0.5"), std::string::npos);

  facts.rdma_ports = {RocePort("mlx5_0", 3), RocePort("mlx5_1", 5)};  // ports disagree
  env = ComputeWithBuiltin(facts, FabricKind::kRoce);
  EXPECT_EQ(Values(env).count("NCCL_IB_GID_INDEX"), 0u);
  ASSERT_EQ(env.warnings.size(), 1u);
  EXPECT_NE(env.warnings[0].find("before 2.21"), std::string::npos);
}

// A walk that failed (no access to umad, `run` without a topology) knows
// no switch: active InfiniBand ports in sysfs still mean InfiniBand, never
// TCP with NCCL_IB_DISABLE=1, and NCCL_IB_HCA names those ports only (an
// active Ethernet RDMA port, a front-end NIC, stays out).
TEST(EnvRules, ActiveInfinibandPortsInSysfsMeanInfinibandWithoutAFabric) {
  Topology topology;
  AttachLayout(topology, "hdr01", HostLayout{});
  EnvFacts facts = FactsFor(topology, "hdr01");
  facts.rdma_ports = std::vector<RdmaPort>{{"mlx5_0", 1, "InfiniBand", "ACTIVE", {}}, {"mlx5_1", 1, "InfiniBand", "ACTIVE", {}},
                                           {"mlx5_2", 1, "InfiniBand", "DOWN", {}}, RocePort("mlx5_3", 3)};
  ASSERT_EQ(DetectFabricKind(facts), FabricKind::kInfiniband);
  EnvOutcome env = ComputeWithBuiltin(facts, FabricKind::kInfiniband);
  EXPECT_EQ(Values(env), With({{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
  EXPECT_NE(ReasonOf(env, "NCCL_IB_HCA").find("active InfiniBand port(s) of hdr01 in sysfs (its fabric was not discovered"),
            std::string::npos)
      << ReasonOf(env, "NCCL_IB_HCA");
  EXPECT_TRUE(env.warnings.empty());

  Topology no_host;  // `env --fabric none` on a machine the topology does not list
  EnvFacts bare = FactsFor(no_host, "hdr01");
  bare.rdma_ports = facts.rdma_ports;
  ASSERT_EQ(DetectFabricKind(bare), FabricKind::kInfiniband);
  EXPECT_EQ(Values(ComputeWithBuiltin(bare, FabricKind::kInfiniband)).at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
}

TEST(EnvRules, SharpAggregationNodesGetANoteOnCollNetAndNoValue) {
  HandTopology t;
  t.Switch(0x10, "leaf01", 1).Hca("node01", 0xa1, "mlx5_0", 0x10);
  t.Unmapped(0xb1, "Mellanox Technologies Aggregation Node", "SHARP aggregation node (in-network reduction engine, not a host)");
  Topology sharp = t.Build();
  EnvOutcome env = ComputeWithBuiltin(FactsFor(sharp, "node01"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(env).count("NCCL_COLLNET_ENABLE"), 0u);
  EXPECT_NE(ReasonOf(env, "NCCL_COLLNET_ENABLE").find("1 SHARP aggregation node(s)"), std::string::npos)
      << ReasonOf(env, "NCCL_COLLNET_ENABLE");
  Topology plain = SingleRail();
  EXPECT_NE(ReasonOf(ComputeWithBuiltin(FactsFor(plain, "node01"), FabricKind::kInfiniband), "NCCL_COLLNET_ENABLE")
                .find("no SHARP aggregation node"),
            std::string::npos);
}

// MNNVL: NCCL's default detects it from the same NVML facts; the reason says
// what was found, a host whose GPUs are not registered gets a warning, and
// nothing is ever set.
TEST(EnvRules, NvlinkDomainsAreExplainedAndLeftToNccl) {
  Topology racks = SingleRail();
  testing::PutInRacks(racks, {{"node01", 0}, {"node02", 0}});
  EnvOutcome in = ComputeWithBuiltin(FactsFor(racks, "node01"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(in).count("NCCL_MNNVL_ENABLE"), 0u);
  std::string reason = ReasonOf(in, "NCCL_MNNVL_ENABLE");
  EXPECT_NE(reason.find("node01 is in NVLink domain nvl0 (clique 1 of cluster " + testing::RackUuid(0) + ", 2 host(s)"),
            std::string::npos) << reason;
  EXPECT_NE(reason.find("NCCL's default (auto) finds it"), std::string::npos) << reason;
  for (const std::string& w : in.warnings) EXPECT_EQ(w.find("NVLink"), std::string::npos) << w;

  AttachLayout(racks, "node02", testing::TrayLayout("gb200-tray-fabric-in-progress.layout.json"));
  EnvOutcome waiting = ComputeWithBuiltin(FactsFor(racks, "node02"), FabricKind::kInfiniband);
  EXPECT_EQ(Values(waiting).count("NCCL_MNNVL_ENABLE"), 0u);
  EXPECT_NE(ReasonOf(waiting, "NCCL_MNNVL_ENABLE").find("leaves MNNVL off for the whole job"), std::string::npos)
      << ReasonOf(waiting, "NCCL_MNNVL_ENABLE");
  std::string warned;
  for (const std::string& w : waiting.warnings)
    if (w.find("NVLink fabric") != std::string::npos) warned = w;
  EXPECT_NE(warned.find("0008:01:00.0 (in_progress)"), std::string::npos) << warned;

  Topology plain = SingleRail();
  EXPECT_NE(ReasonOf(ComputeWithBuiltin(FactsFor(plain, "node01"), FabricKind::kInfiniband), "NCCL_MNNVL_ENABLE")
                .find("layout of node01 is unknown"),
            std::string::npos);
  HostLayout hgx = testing::TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  AttachLayout(plain, "node01", hgx);
  EXPECT_NE(ReasonOf(ComputeWithBuiltin(FactsFor(plain, "node01"), FabricKind::kInfiniband), "NCCL_MNNVL_ENABLE")
                .find("no GPU of node01 is in a multi-node NVLink fabric"),
            std::string::npos);
}

TEST(EnvRules, GidIndexNeverOnInfiniband) {
  Topology topology = SingleRail();
  RuleInput input{FactsFor(topology, "node01"), FabricKind::kInfiniband};
  EXPECT_EQ(DecideGidIndex(input).value, "");
}

TEST(EnvRules, EveryRuleDecidesARealName) {
  for (const EnvRule& rule : EnvRules()) EXPECT_TRUE(IsRealVariableName(rule.name)) << rule.name;
  for (const char* debug_knob : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_NET_GDR_LEVEL", "NCCL_IB_QPS_PER_CONNECTION"})
    EXPECT_EQ(FindEnvRule(debug_knob), nullptr) << debug_knob << " must never be set by default";
}

}  // namespace
}  // namespace topolaunch
