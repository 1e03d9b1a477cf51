// NVLink domains from the layouts' GPU fabric info, and topology.json's
// view of them: written, read back, checked against the layouts.
#include "core/nvlink_domains.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/nvlink_racks.h"
#include "topolaunch/topology_json.h"

namespace topolaunch {
namespace {

using testing::InRack;
using testing::RackUuid;
using testing::TrayLayout;

Topology Racks() {
  Topology t;
  t.generated = {"topolaunch test", "2026-12-03T00:00:00Z", "none"};
  // Rack 1 holds node01..node03, rack 0 node04 and node10; node05 is an
  // HGX box (no fabric info), node06 still registering.
  for (const char* host : {"node10", "node02", "node05", "node04", "node01", "node03", "node06"}) AttachLayout(t, host, HostLayout{});
  testing::PutInRacks(t, {{"node01", 1}, {"node02", 1}, {"node03", 1}, {"node04", 0}, {"node10", 0}});
  HostLayout hgx = TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  AttachLayout(t, "node05", hgx);
  AttachLayout(t, "node06", TrayLayout("gb200-tray-fabric-in-progress.layout.json"));
  return t;
}

TEST(NvlinkDomains, FromTheLayoutsNamedByTheirFirstHost) {
  NvlinkDomains d = ComputeNvlinkDomains(Racks());
  ASSERT_EQ(d.domains.size(), 2u);
  EXPECT_EQ(d.domains[0], (NvlinkDomain{"nvl0", RackUuid(1), 1, {"node01", "node02", "node03"}}));
  EXPECT_EQ(d.domains[1], (NvlinkDomain{"nvl1", RackUuid(0), 1, {"node04", "node10"}}));
  EXPECT_EQ(d.Find("node10"), &d.domains[1]);
  EXPECT_EQ(d.Find("node05"), nullptr) << "no fabric info: in no domain";
  EXPECT_EQ(d.Find("node06"), nullptr) << "registration in progress: NCCL counts it in none";
  EXPECT_EQ(d.Find("ghost"), nullptr);
}

TEST(NvlinkDomains, DoNotDependOnTheHostOrder) {
  Topology t = Racks();
  NvlinkDomains first = ComputeNvlinkDomains(t);
  std::mt19937 rng(3);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(t.hosts.begin(), t.hosts.end(), rng);
    NvlinkDomains again = ComputeNvlinkDomains(t);
    EXPECT_EQ(again.domains, first.domains);
  }
}

TEST(NvlinkDomains, AHostGoesWithMostOfItsGpus) {
  HostLayout split = TrayLayout("gb200-tray-one-gpu-in-another-clique.layout.json");
  auto key = HostNvlinkDomainKey(split);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->second, 7u) << "three GPUs in clique 7, one in 8";
  // Two against two: the smaller key, whatever the GPU order.
  split.gpus[2].nvlink_fabric->clique_id = 8;
  EXPECT_EQ(HostNvlinkDomainKey(split)->second, 7u);
  std::reverse(split.gpus.begin(), split.gpus.end());
  EXPECT_EQ(HostNvlinkDomainKey(split)->second, 7u);
  EXPECT_FALSE(HostNvlinkDomainKey(TrayLayout("gb200-tray-fabric-in-progress.layout.json")).has_value());
  HostLayout zero = InRack(TrayLayout(), 0);
  for (Gpu& g : zero.gpus) g.nvlink_fabric->cluster_uuid = std::string(kZeroFabricUuid);
  EXPECT_FALSE(HostNvlinkDomainKey(zero).has_value()) << "an all-zero cluster UUID is no multi-node fabric";
}

TEST(NvlinkDomains, TopologyJsonWritesTheViewAndReadsItBack) {
  Topology t = Racks();
  std::string text = FormatTopologyJson(t);
  nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_TRUE(doc.contains("nvlink_domains"));
  ASSERT_EQ(doc["nvlink_domains"].size(), 2u);
  EXPECT_EQ(doc["nvlink_domains"][0]["name"], "nvl0");
  EXPECT_EQ(doc["nvlink_domains"][0]["cluster_uuid"], RackUuid(1));
  EXPECT_EQ(doc["nvlink_domains"][0]["hosts"], nlohmann::json({"node01", "node02", "node03"}));
  Result<Topology> back = ParseTopologyJson(text, "topology.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(FormatTopologyJson(*back), text);
  // Without NVLink fabric info the view is an empty list.
  Topology plain;
  AttachLayout(plain, "node01", HostLayout{});
  EXPECT_EQ(nlohmann::json::parse(FormatTopologyJson(plain))["nvlink_domains"], nlohmann::json::array());
}

TEST(NvlinkDomains, FilesWithoutTheViewStillRead) {
  nlohmann::json doc = nlohmann::json::parse(FormatTopologyJson(Racks()));
  doc.erase("nvlink_domains");
  Result<Topology> back = ParseTopologyJson(doc.dump(), "old.json");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(ComputeNvlinkDomains(*back).domains.size(), 2u);
}

TEST(NvlinkDomains, AViewThatDisagreesWithTheLayoutsIsNamed) {
  nlohmann::json doc = nlohmann::json::parse(FormatTopologyJson(Racks()));
  doc["nvlink_domains"][1]["hosts"] = nlohmann::json::array({"node04"});
  Result<Topology> edited = ParseTopologyJson(doc.dump(), "edited.json");
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.error().Message().find("edited.json: $.nvlink_domains[1]"), std::string::npos) << edited.error().Message();
  EXPECT_NE(edited.error().Message().find("nvl1"), std::string::npos);

  doc["nvlink_domains"] = nlohmann::json::array({doc["nvlink_domains"][0]});
  edited = ParseTopologyJson(doc.dump(), "short.json");
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.error().Message().find("is missing"), std::string::npos) << edited.error().Message();

  doc["nvlink_domains"] = nlohmann::json::array({nlohmann::json::object({{"name", 3}})});
  edited = ParseTopologyJson(doc.dump(), "typed.json");
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.error().Message().find("$.nvlink_domains[0].name"), std::string::npos) << edited.error().Message();
  doc["nvlink_domains"] = "nvl0";
  edited = ParseTopologyJson(doc.dump(), "scalar.json");
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.error().Message().find("expected an array"), std::string::npos) << edited.error().Message();
}

}  // namespace
}  // namespace topolaunch
