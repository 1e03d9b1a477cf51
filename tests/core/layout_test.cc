// CPU lists and the layout's JSON form: round trips and every reading problem.
#include "topolaunch/layout.h"

#include <fmt/format.h>
#include <set>

#include <gtest/gtest.h>

#include "core/layout_json.h"

namespace topolaunch {
namespace {

using nlohmann::json;

TEST(FormatCpuList, RangesAndSingles) {
  struct Case {
    std::vector<int> cpus;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{
           {{}, ""},
           {{0}, "0"},
           {{0, 1}, "0-1"},
           {{0, 2}, "0,2"},
           {{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
           {{3, 1, 2, 2}, "1-3"},  // unsorted and repeated
           {{80, 81, 88, 89, 96, 97, 104, 105}, "80-81,88-89,96-97,104-105"},
       })
    EXPECT_EQ(FormatCpuList(c.cpus), c.text);
}

TEST(ParseCpuList, AcceptsTheLinuxForm) {
  struct Case {
    const char* text;
    std::vector<int> cpus;
  };
  for (const Case& c : std::vector<Case>{
           {"", {}},
           {"0", {0}},
           {"5-5", {5}},
           {"0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}},
           {"3,1,2", {1, 2, 3}},
           {"1,1-2", {1, 2}},
       }) {
    Result<std::vector<int>> r = ParseCpuList(c.text, "$.cpus");
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().Message();
    EXPECT_EQ(*r, c.cpus) << c.text;
  }
}

TEST(ParseCpuList, RejectsWithTheGivenPlace) {
  for (const char* bad : {"0-", "-1", "a", "1,,2", "3-1", ",", "1,", " 1", "0-1048576", "1-2-3", "0x3"}) {
    Result<std::vector<int>> r = ParseCpuList(bad, "$.numa_nodes[1].cpus");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kBadInput);
    EXPECT_EQ(r.error().problems[0].where, "$.numa_nodes[1].cpus");
    EXPECT_NE(r.error().problems[0].what.find(bad), std::string::npos) << r.error().problems[0].what;
  }
}

// A hostile node's reply: 2 KB that names the same million CPUs over and
// over must cost one million ints, not one per repetition (that was 1 GB).
TEST(ParseCpuList, OverlappingRangesCostTheirUnionOnly) {
  std::string text = "0-1048575";
  for (int i = 0; i < 200; ++i) text += ",0-1048575";
  text += ",5,7-9";
  Result<std::vector<int>> r = ParseCpuList(text, "$.cpus");
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_EQ(r->size(), 1u << 20);
  EXPECT_LE(r->capacity(), 2u << 20) << "the list grew per repetition";
  EXPECT_EQ(r->front(), 0);
  EXPECT_EQ(r->back(), (1 << 20) - 1);
  Result<std::vector<int>> overlapping = ParseCpuList("8-15,0-9,3,20-21,14-16", "$.cpus");
  ASSERT_TRUE(overlapping.ok());
  EXPECT_EQ(*overlapping, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 21}));
}

TEST(ParseCpuList, FormatThenParseIsIdentity) {
  for (const std::vector<int>& cpus :
       std::vector<std::vector<int>>{{}, {7}, {0, 1, 2, 3}, {0, 2, 4, 6}, {1, 2, 3, 9, 10, 100, 101, 102, 1023}}) {
    Result<std::vector<int>> r = ParseCpuList(FormatCpuList(cpus), "x");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, cpus);
  }
}

HostLayout Sample() {
  HostLayout l;
  l.hostname = "node017";
  l.source = "hwloc-live";
  l.architecture = "x86_64";
  l.packages = 2;
  l.cores = 8;
  l.pus = 16;
  l.numa_nodes = {{0, 0, {0, 1, 2, 3, 8, 9, 10, 11}, 64ull << 30}, {1, 1, {4, 5, 6, 7, 12, 13, 14, 15}, 64ull << 30}};
  Gpu a;
  a.pci_bus_id = "0000:07:00.0";
  a.vendor = "nvidia";
  a.model = "NVIDIA H100 80GB HBM3";
  a.os_devices = {"cuda0", "nvml0"};
  a.numa = 0;
  a.link = PcieLink{63.015};
  a.nvlink_peers = {"0000:87:00.0"};
  Gpu b = a;
  b.pci_bus_id = "0000:87:00.0";
  b.numa = 1;
  b.link.reset();
  b.nvlink_peers = {"0000:07:00.0"};
  a.pci_parent = "0000:06:00.0";
  l.gpus = {a, b};
  l.pci_bridges = {{"0000:05:00.0", "", PcieLink{31.5}, 0x1000, 0xc010, 0x1000, 0xa000},
                   {"0000:06:00.0", "0000:05:00.0", std::nullopt}};
  Nic ib;
  ib.name = "mlx5_0";
  ib.kind = "openfabrics";
  ib.pci_bus_id = "0000:08:00.0";
  ib.netdevs = {"ib0"};
  ib.node_guid = 0x0800380001c091ecull;
  ib.numa = 0;
  ib.link = PcieLink{31.508};
  Nic eth;
  eth.name = "eth0";
  eth.kind = "network";
  l.nics = {eth, ib};
  l.gpu_nic_paths = {{"0000:07:00.0", "mlx5_0", PcieRelation::kSamePcieSwitch},
                     {"0000:87:00.0", "mlx5_0", PcieRelation::kAcrossSockets}};
  l.nvml = NvmlFacts{"ok", "550.54.15"};
  l.gpus[1].nvlink_fabric = GpuFabric{"6a7b1c2d-3e4f-4a5b-8c6d-7e8f90a1b2c3", 7, "completed", "ok", {"degraded_bandwidth"}};
  return l;
}

TEST(LayoutJson, RoundTripsEveryField) {
  HostLayout l = Sample();
  Result<HostLayout> back = LayoutFromJson(json::parse(LayoutToJson(l).dump()), "$.layout");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, l);
  l.nvml.reset();
  l.gpus[0].link.reset();
  l.nics[1].node_guid.reset();
  back = LayoutFromJson(LayoutToJson(l), "$.layout");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, l);
}

// NVML's GPU fabric info is optional (GPUs outside an NVLink fabric have
// none) and every field of it is checked, each problem with its path.
TEST(LayoutJson, NvlinkFabricIsOptionalAndChecked) {
  HostLayout l = Sample();
  json j = LayoutToJson(l);
  EXPECT_FALSE(j["gpus"][0].contains("nvlink_fabric"));
  EXPECT_EQ(j["gpus"][1]["nvlink_fabric"]["clique_id"], 7);
  j["gpus"][0]["nvlink_fabric"] = nullptr;  // null reads as none
  Result<HostLayout> back = LayoutFromJson(j, "$.layout");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, l);
  json& f = j["gpus"][1]["nvlink_fabric"];
  f["cluster_uuid"] = "6A7B1C2D-3E4F-4A5B-8C6D-7E8F90A1B2C3";
  f["clique_id"] = -1;
  f["state"] = "done";
  f["status"] = "";
  f["health"] = {"degraded_bandwidth", "on fire"};
  j["gpus"][0]["nvlink_fabric"] = "clique 7";
  Result<HostLayout> bad = LayoutFromJson(j, "$.layout");
  ASSERT_FALSE(bad.ok());
  std::set<std::string> where;
  for (const Problem& p : bad.error().problems) where.insert(p.where);
  std::string base = "$.layout.gpus[1].nvlink_fabric";
  EXPECT_EQ(where, (std::set<std::string>{"$.layout.gpus[0].nvlink_fabric", base + ".cluster_uuid", base + ".clique_id",
                                          base + ".state", base + ".status", base + ".health[1]"}))
      << bad.error().Message();
}

TEST(GpuFabric, InADomainOnlyWhenRegisteredUnderARealCluster) {
  GpuFabric f{"6a7b1c2d-3e4f-4a5b-8c6d-7e8f90a1b2c3", 7, "completed", "ok", {}};
  EXPECT_TRUE(f.InDomain());
  f.state = "in_progress";
  EXPECT_FALSE(f.InDomain());
  f.state = "completed";
  f.cluster_uuid = std::string(kZeroFabricUuid);
  EXPECT_FALSE(f.InDomain()) << "NCCL: a zero UUID is no MNNVL fabric";
}

// A layout written before pci_bridges existed reads as one whose PCI tree
// is unknown; a broken tree is refused with the field that breaks it, and a
// loop cannot hang the reader or PciBridgeChain.
TEST(LayoutJson, PciBridgesAreOptionalAndChecked) {
  HostLayout l = Sample();
  json old = LayoutToJson(l);
  old.erase("pci_bridges");
  for (json& gpu : old["gpus"]) gpu.erase("pci_parent");
  for (json& nic : old["nics"]) nic.erase("pci_parent");
  Result<HostLayout> back = LayoutFromJson(old, "$.layout");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_TRUE(back->pci_bridges.empty());
  EXPECT_EQ(back->gpus[0].pci_parent, "");

  std::vector<const PciBridge*> chain = PciBridgeChain(l, "0000:06:00.0");
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0]->pci_bus_id, "0000:05:00.0");
  EXPECT_EQ(chain[1]->pci_bus_id, "0000:06:00.0");
  EXPECT_TRUE(PciBridgeChain(l, "").empty());

  json broken = LayoutToJson(l);
  broken["gpus"][1]["pci_parent"] = "0000:99:00.0";
  broken["pci_bridges"][0]["parent"] = "0000:06:00.0";  // 05 <- 06 <- 05: a loop
  broken["pci_bridges"].push_back({{"pci_bus_id", "0000:06:00.0"}, {"parent", nullptr}, {"link_gbytes_per_s", nullptr}});
  broken["nics"][0]["pci_parent"] = "06:00.0";
  broken["pci_bridges"][1]["pci_ids"] = "1000:c010";
  Result<HostLayout> r = LayoutFromJson(broken, "$.layout");
  ASSERT_FALSE(r.ok());
  std::string message = r.error().Message();
  for (const char* where : {"$.layout.gpus[1].pci_parent", "$.layout.pci_bridges[0].parent", "$.layout.pci_bridges[2].pci_bus_id",
                            "$.layout.nics[0].pci_parent", "$.layout.pci_bridges[1].pci_ids"})
    EXPECT_NE(message.find(where), std::string::npos) << where << " in:\n" << message;
  EXPECT_NE(message.find("is its own ancestor"), std::string::npos) << message;
  EXPECT_NE(message.find("is listed twice"), std::string::npos) << message;

  HostLayout loop;
  loop.pci_bridges = {{"0000:05:00.0", "0000:06:00.0", std::nullopt}, {"0000:06:00.0", "0000:05:00.0", std::nullopt}};
  EXPECT_EQ(PciBridgeChain(loop, "0000:05:00.0").size(), 2u) << "cut, not endless";

  // A hostile layout with a chain of 5,000 bridges is refused (and read in
  // linear time, not once per bridge).
  json deep = LayoutToJson(Sample());
  deep["pci_bridges"] = json::array();
  for (int i = 0; i < 5000; ++i)
    deep["pci_bridges"].push_back({{"pci_bus_id", fmt::format("{:04x}:00:00.0", i)},
                                   {"parent", i ? json(fmt::format("{:04x}:00:00.0", i - 1)) : json(nullptr)},
                                   {"link_gbytes_per_s", nullptr}});
  deep["gpus"][0]["pci_parent"] = nullptr;
  Result<HostLayout> refused = LayoutFromJson(deep, "$.layout");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Message().find("$.layout.pci_bridges: 5000 bridges"), std::string::npos) << refused.error().Message();
}

TEST(LayoutJson, WritesCpuListsGuidsAndNulls) {
  HostLayout l = Sample();
  l.nvml.reset();
  json j = LayoutToJson(l);
  EXPECT_EQ(j["numa_nodes"][0]["cpus"], "0-3,8-11");
  EXPECT_EQ(j["gpus"][0]["link_gbytes_per_s"], 63.015);
  EXPECT_EQ(j["gpus"][0]["pci_parent"], "0000:06:00.0");
  EXPECT_TRUE(j["gpus"][1]["pci_parent"].is_null());
  EXPECT_EQ(j["pci_bridges"][0]["pci_ids"], "1000:c010 1000:a000");
  EXPECT_TRUE(j["pci_bridges"][1]["pci_ids"].is_null());
  EXPECT_TRUE(j["gpus"][1]["link_gbytes_per_s"].is_null());
  EXPECT_EQ(j["nics"][1]["node_guid"], "0x0800380001c091ec");
  EXPECT_TRUE(j["nics"][0]["node_guid"].is_null());
  EXPECT_EQ(j["gpu_nic_paths"][1]["relation"], "across_sockets");
  EXPECT_FALSE(j.contains("nvml"));
}

TEST(LayoutJson, ReportsEveryProblemWithItsPath) {
  json j = LayoutToJson(Sample());
  j.erase("pus");
  j["numa_nodes"][0]["cpus"] = "0-";
  j["numa_nodes"][1]["memory_bytes"] = -5;
  j["gpus"][0]["numa"] = "zero";
  j["gpus"][1]["pci_bus_id"] = "87:00.0";
  j["gpus"][1]["vendor"] = "intel";
  j["nics"][0]["kind"] = "wifi";
  j["nics"][1]["node_guid"] = "0xABC";
  j["nics"][1]["netdevs"] = json::array({"ib0", 3});
  j["gpu_nic_paths"][0]["relation"] = "near";
  j["gpu_nic_paths"][1]["nic"] = "mlx5_9";
  j["nvml"] = json::array();
  Result<HostLayout> r = LayoutFromJson(j, "$.hosts[3].layout");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kBadInput);
  std::vector<std::string> where;
  for (const Problem& p : r.error().problems) where.push_back(p.where);
  const std::string base = "$.hosts[3].layout";
  for (const std::string& path :
       {base + ".pus", base + ".numa_nodes[0].cpus", base + ".numa_nodes[1].memory_bytes", base + ".gpus[0].numa",
        base + ".gpus[1].pci_bus_id", base + ".gpus[1].vendor", base + ".nics[0].kind", base + ".nics[1].node_guid",
        base + ".nics[1].netdevs[1]", base + ".gpu_nic_paths[0].relation", base + ".gpu_nic_paths[1].nic",
        // follows from the bad pci_bus_id of gpus[1]:
        base + ".gpu_nic_paths[1].gpu", base + ".nvml"})
    EXPECT_NE(std::find(where.begin(), where.end(), path), where.end()) << "missing " << path << " in:\n"
                                                                        << r.error().Message();
  EXPECT_EQ(where.size(), 13u) << r.error().Message();
  for (const Problem& p : r.error().problems) {
    if (p.where == base + ".gpus[0].numa") {
      EXPECT_EQ(p.what, "expected an integer, found a string");
    }
  }
}

TEST(LayoutJson, NotAnObject) {
  Result<HostLayout> r = LayoutFromJson(json::array(), "$.hosts[0].layout");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().problems.size(), 1u);
  EXPECT_EQ(r.error().problems[0].where, "$.hosts[0].layout");
}

TEST(PcieRelation, NamesRoundTrip) {
  for (PcieRelation r : {PcieRelation::kSamePcieSwitch, PcieRelation::kSameHostBridge, PcieRelation::kSameSocket,
                         PcieRelation::kAcrossSockets, PcieRelation::kUnknown})
    EXPECT_EQ(ParsePcieRelation(PcieRelationName(r)), r);
  EXPECT_EQ(ParsePcieRelation("SAME_SOCKET"), std::nullopt);
}

}  // namespace
}  // namespace topolaunch
