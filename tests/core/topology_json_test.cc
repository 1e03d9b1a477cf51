#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topolaunch/topology_json.h"

#include "core/json_text.h"

namespace topolaunch {
namespace {

Topology Sample() {
  Topology t;
  t.generated = {"topolaunch 0.1.0", "2026-11-29T07:00:00Z", "ibnetdiscover"};
  t.switches = {{0x0002c90300000001, "leaf1", 1, 36}, {0x0002c90300000002, "spine1", 2, 40}};
  HcaAttachment a;
  a.guid = 0x0002c90300a1b2c3;
  a.port_guid = 0x0002c90300a1b2c4;
  a.description = "node017 mlx5_0";
  a.device = "mlx5_0";
  a.port = 1;
  a.switch_guid = 0x0002c90300000001;
  a.switch_port = 12;
  a.width = "4X";
  a.speed = "HDR";
  a.rate_gbps = 200;
  HcaAttachment isolated;
  isolated.guid = 0x0002c90300a1b2d0;
  isolated.description = "node018 HCA-1";
  isolated.port = 1;
  HostLayout layout;
  layout.hostname = "node017";
  layout.source = "hwloc-xml:node017.xml";
  layout.architecture = "x86_64";
  layout.packages = 2;
  layout.cores = 4;
  layout.pus = 8;
  layout.numa_nodes = {{0, 0, {0, 1, 2, 3}, 1ull << 30}, {1, 1, {4, 5, 6, 7}, 1ull << 30}};
  Gpu gpu;
  gpu.pci_bus_id = "0000:07:00.0";
  gpu.vendor = "nvidia";
  gpu.model = "A100";
  gpu.numa = 0;
  gpu.link = PcieLink{31.5};
  layout.gpus = {gpu};
  Nic nic;
  nic.name = "mlx5_0";
  nic.kind = "openfabrics";
  nic.pci_bus_id = "0000:08:00.0";
  nic.netdevs = {"ib0"};
  nic.numa = 0;
  layout.nics = {nic};
  layout.gpu_nic_paths = {{"0000:07:00.0", "mlx5_0", PcieRelation::kSamePcieSwitch}};
  t.hosts = {{"node017", {a}, layout}, {"node018", {isolated}, std::nullopt}};
  t.links = {{{0x0002c90300000001, 12}, {0x0002c90300a1b2c3, 1}, "4X", "HDR", "Active"},
             {{0x0002c90300000001, 30}, {0x0002c90300000002, 1}, "4X", "HDR", ""}};
  t.unmapped = {{0x0002c90300ffffff, "MT4129 ConnectX7   Mellanox Technologies", "firmware default"}};
  return t;
}

TEST(TopologyJson, RoundTripsEveryField) {
  Topology t = Sample();
  std::string text = FormatTopologyJson(t);
  Result<Topology> back = ParseTopologyJson(text, "topology.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(FormatTopologyJson(*back), text);  // byte-stable
}

TEST(TopologyJson, PiecesJoinToTheSameBytes) {
  Topology t = Sample();
  for (int i = 0; i < 50; ++i) t.hosts.push_back({"n" + std::to_string(i), t.hosts[0].hcas, t.hosts[0].layout});
  std::string whole = FormatTopologyJson(t);
  std::vector<std::string> pieces;
  WriteTopologyJson(t, 1024, [&](std::string piece) { pieces.push_back(std::move(piece)); });
  EXPECT_GT(pieces.size(), whole.size() / 2048);  // it did hand out pieces as it went
  std::string joined;
  for (const std::string& piece : pieces) joined += piece;
  EXPECT_EQ(joined, whole);
}

// The writer goes straight to text; what it writes must be what nlohmann
// writes for the same document (the form every earlier topology.json has).
TEST(TopologyJson, WritesNlohmannsOwnFormByteForByte) {
  Topology t = Sample();
  t.hosts[0].hcas[0].rate_gbps = 53.125;
  t.hosts[0].hcas[0].description = "node017 \"HCA\"\t\xff";
  t.switches[0].name = "MF0;leaf1:MQM9700/U1 \xe2\x82";
  std::string text = FormatTopologyJson(t);
  EXPECT_EQ(DumpJsonText(nlohmann::ordered_json::parse(text), 2) + "\n", text);
  EXPECT_NE(text.find("\"rate_gbps\": 53.125"), std::string::npos);
  EXPECT_NE(text.find("      \"layout\": {\n        \"architecture\": \"x86_64\","), std::string::npos) << text;
}

TEST(TopologyJson, WritesTheSchemaInSpecOrder) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(FormatTopologyJson(Sample()));
  std::vector<std::string> keys;
  for (auto& [k, v] : doc.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "generated", "switches", "hosts", "links", "unmapped", "nvlink_domains"}));
  EXPECT_EQ(doc["schema"], "topolaunch.topology/1");
  EXPECT_EQ(doc["hosts"][0]["hcas"][0]["switch_guid"], "0x0002c90300000001");
  EXPECT_EQ(doc["hosts"][0]["hcas"][0]["rate_gbps"], 200);
  EXPECT_TRUE(doc["hosts"][1]["hcas"][0]["switch_guid"].is_null());
  EXPECT_TRUE(doc["links"][1]["state"].is_null());
  EXPECT_FALSE(doc["hosts"][1].contains("layout"));
}

TEST(TopologyJson, ReportsEveryProblemWithItsPath) {
  nlohmann::json doc = nlohmann::json::parse(FormatTopologyJson(Sample()));
  doc["switches"][0]["guid"] = "0x2C9";
  doc["switches"][1]["level"] = "two";
  doc["hosts"][0]["hcas"][0].erase("port");
  doc["hosts"][1]["name"] = "bad name";
  doc["links"][0]["from"]["port"] = 300;
  doc["hosts"][0]["layout"]["numa_nodes"][0]["cpus"] = "0-";
  Result<Topology> back = ParseTopologyJson(doc.dump(), "t.json");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().code, ErrorCode::kBadInput);
  std::string message = back.error().Message();
  for (const char* path : {"t.json: $.switches[0].guid", "t.json: $.switches[1].level", "t.json: $.hosts[0].hcas[0].port",
                           "t.json: $.hosts[1].name", "t.json: $.links[0].from.port", "$.hosts[0].layout.numa_nodes[0].cpus"})
    EXPECT_NE(message.find(path), std::string::npos) << "missing " << path << " in:\n" << message;
  EXPECT_GE(back.error().problems.size(), 6u);
}

TEST(TopologyJson, MissingTopLevelKeys) {
  Result<Topology> back = ParseTopologyJson(R"({"schema": "topolaunch.topology/1"})", "t.json");
  ASSERT_FALSE(back.ok());
  std::string message = back.error().Message();
  for (const char* key : {"$.generated", "$.switches", "$.hosts", "$.links", "$.unmapped"})
    EXPECT_NE(message.find(key), std::string::npos) << key;
}

TEST(TopologyJson, WrongSchemaIsOneClearProblem) {
  Result<Topology> back = ParseTopologyJson(R"({"schema": "topolaunch.plan/1"})", "t.json");
  ASSERT_FALSE(back.ok());
  ASSERT_EQ(back.error().problems.size(), 1u);
  EXPECT_EQ(back.error().problems[0].where, "t.json: $.schema");
  EXPECT_NE(back.error().problems[0].what.find("topolaunch.topology/1"), std::string::npos);
}

TEST(TopologyJson, SyntaxErrorNamesLineAndColumn) {
  Result<Topology> back = ParseTopologyJson("{\n  \"schema\": \"x\",\n  oops\n}", "t.json");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().problems[0].where, "t.json:3:3");
  Result<Topology> truncated = ParseTopologyJson(FormatTopologyJson(Sample()).substr(0, 200), "t.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, ErrorCode::kBadInput);
}

// A number no double holds: nlohmann throws out_of_range (not parse_error)
// for it, and that too is bad input, never an abort.
TEST(TopologyJson, ANumberTooLargeIsBadInputNotACrash) {
  Result<Topology> back = ParseTopologyJson(R"({"schema": "topolaunch.topology/1", "generated": 1e99999})", "t.json");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(back.error().problems[0].where, "t.json");
  EXPECT_EQ(back.error().problems[0].what, "not valid JSON: number overflow parsing '1e99999'");
}

TEST(TopologyJson, NotAnObject) {
  Result<Topology> back = ParseTopologyJson("[1,2]", "t.json");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().problems[0].where, "t.json: $");
}

TEST(TopologyJson, AttachmentToAnUnlistedSwitch) {
  Topology t = Sample();
  t.hosts[0].hcas[0].switch_guid = 0x0002c903000000ff;
  Result<Topology> back = ParseTopologyJson(FormatTopologyJson(t), "t.json");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().problems[0].where, "t.json: $.hosts[0].hcas[0].switch_guid");
  EXPECT_NE(back.error().problems[0].what.find("not in $.switches"), std::string::npos);
}

}  // namespace
}  // namespace topolaunch
