// NVLink domains end to end through the binary, as an admin of GB200 racks
// would go: each tray's layout written on the tray (HOST.json, with NVML's
// fabric info), `discover --layout-dir` with the fabric dump, then plan,
// audit, env and the topology/block file from that topology.json.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "core/layout_json.h"
#include "rankmap/fabric_groups.h"
#include "rankmap/rank_map.h"
#include "rankmap/rankmap_test_util.h"
#include "support/nvlink_racks.h"

namespace topolaunch::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class NvlinkCli : public ::testing::Test {
 protected:
  // Two racks of 18 trays on two leaves, names scattered over the cabling;
  // rack r is cabled to leaf r. In rack 0 one tray has a GPU in another
  // clique (it stays with its rack), in rack 1 one tray is still
  // registering (no domain). One tray's file is a whole topology.json
  // (what `discover --fabric none -o HOST.json` writes on the tray).
  void SetUp() override {
    GeneratedFabric fabric = TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 18, .spines = 2, .shuffled_names = true});
    Write(dir_.File("fabric.ibnet"), fabric.netfile);
    Topology cabled = TopologyOf(fabric);
    FabricGroups groups = ComputeFabricGroups(cabled);
    fs::create_directory(dir_.File("layouts"));
    HostLayout tray = TrayLayout();
    for (const std::string& host : NaturalSorted(HostNames(cabled))) {
      int rack = groups.hosts.at(host).leaf_group;
      racks_[host] = rack;
      HostLayout layout = InRack(tray, rack);
      layout.hostname = host;
      std::string file = dir_.File("layouts/" + host + ".json");
      if (rack == 0 && split_.empty()) {
        split_ = host;
        layout.gpus.back().nvlink_fabric->clique_id = 9;
      } else if (rack == 1 && registering_.empty()) {
        registering_ = host;
        fs::copy_file(TestDataDir() + "/nvlink/gb200-tray-fabric-in-progress.layout.json", file);
        continue;
      } else if (whole_file_.empty()) {
        whole_file_ = host;
        Topology one;
        one.generated = {"topolaunch test", "", "none"};
        AttachLayout(one, host, layout);
        Write(file, FormatTopologyJson(one));
        continue;
      }
      Write(file, LayoutToJson(layout).dump(2));
    }
    ProcessResult discovered = RunTopolaunch({"discover", "--fabric", dir_.File("fabric.ibnet"), "--layout-dir",
                                              dir_.File("layouts"), "-o", dir_.File("topology.json")});
    ASSERT_EQ(discovered.exit_code, 0) << discovered.Describe();
  }

  TempDir dir_;
  std::map<std::string, int> racks_;
  std::string split_, registering_, whole_file_;
};

TEST_F(NvlinkCli, DiscoverWritesTheDomainsView) {
  std::ifstream in(dir_.File("topology.json"));
  json doc = json::parse(in);
  ASSERT_EQ(doc["nvlink_domains"].size(), 2u) << doc["nvlink_domains"].dump();
  std::set<std::string> in_domains;
  for (const json& d : doc["nvlink_domains"]) {
    std::set<int> racks;
    for (const json& h : d["hosts"]) racks.insert(racks_.at(h.get<std::string>())), in_domains.insert(h.get<std::string>());
    EXPECT_EQ(racks.size(), 1u) << "a domain is one rack: " << d.dump();
  }
  EXPECT_EQ(in_domains.size(), 35u);
  EXPECT_TRUE(in_domains.contains(split_)) << "with the clique most of its GPUs are in";
  EXPECT_TRUE(in_domains.contains(whole_file_)) << "read from a whole topology.json";
  EXPECT_FALSE(in_domains.contains(registering_));

  ProcessResult text = RunTopolaunch({"discover", "--topology", dir_.File("topology.json"), "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_NE(text.out.find("NVLink domains: 2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("with a GPU in another clique than the host's: " + split_), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no GPU registered with the fabric: " + registering_), std::string::npos) << text.out;
}

TEST_F(NvlinkCli, PlanKeepsEachDomainTogetherAtBothBounds) {
  ProcessResult planned = RunTopolaunch({"plan", "--topology", dir_.File("topology.json"), "--nproc-per-node", "4", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  json plan = json::parse(planned.out);
  const json& m = plan["metrics"];
  EXPECT_EQ(m["ring_nvlink_domain_crossings"], m["ring_nvlink_domain_crossings_lower_bound"]) << m.dump();
  EXPECT_EQ(m["ring_nvlink_domain_crossings_lower_bound"], 3) << "two racks and the tray still registering";
  EXPECT_GT(m["hostname_order_ring_nvlink_domain_crossings"].get<int>(), 3);
  EXPECT_EQ(m["ring_leaf_crossings"], m["ring_leaf_crossings_lower_bound"]);
  std::vector<std::string> run;  // domain of each node, in rank order
  for (const json& n : plan["nodes"]) run.push_back(n["nvlink_domain"].is_null() ? "-" : n["nvlink_domain"].get<std::string>());
  std::set<std::string> closed;
  for (size_t i = 1; i < run.size(); ++i) {
    if (run[i] != run[i - 1]) closed.insert(run[i - 1]);
    EXPECT_FALSE(closed.contains(run[i])) << "domain " << run[i] << " split at node " << i;
  }

  ProcessResult table = RunTopolaunch({"plan", "--topology", dir_.File("topology.json"), "--nproc-per-node", "4"});
  ASSERT_EQ(table.exit_code, 0) << table.Describe();
  EXPECT_NE(table.out.find("ring nvlink_domain crossings: 3 (lower bound 3"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("<nvl0>"), std::string::npos) << table.out;
}

TEST_F(NvlinkCli, NnodesTakesOneWholeDomain) {
  ProcessResult planned = RunTopolaunch(
      {"plan", "--topology", dir_.File("topology.json"), "--nproc-per-node", "4", "--nnodes", "17", "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  json plan = json::parse(planned.out);
  std::set<std::string> domains;
  for (const json& n : plan["nodes"]) domains.insert(n["nvlink_domain"].is_null() ? "-" : n["nvlink_domain"].get<std::string>());
  EXPECT_EQ(domains.size(), 1u) << planned.out;
  EXPECT_EQ(plan["metrics"]["ring_nvlink_domain_crossings"], 0);
}

TEST_F(NvlinkCli, AuditNamesTheSplitTrayAndTheOneRegistering) {
  ProcessResult audit = RunTopolaunch({"audit", "--topology", dir_.File("topology.json"), "--json"});
  EXPECT_EQ(audit.exit_code, 1) << audit.Describe();
  json report = json::parse(audit.out);
  std::map<std::string, std::set<std::string>> checks;  // host -> checks with findings
  for (const json& f : report["findings"]) checks[f["host"].get<std::string>()].insert(f["check"].get<std::string>());
  EXPECT_EQ(checks[split_], std::set<std::string>{"nvlink_clique"});
  EXPECT_EQ(checks[registering_], std::set<std::string>{"nvlink_fabric_state"});
  EXPECT_EQ(checks.size(), 2u) << audit.out;
}

TEST_F(NvlinkCli, EnvExplainsWhatNcclWillFind) {
  ProcessResult env = RunTopolaunch({"env", "--topology", dir_.File("topology.json"), "--host", whole_file_, "--explain"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_EQ(env.out.find("NCCL_MNNVL"), env.out.find("NCCL_MNNVL_ENABLE")) << "only the real name";
  EXPECT_NE((env.out + env.err).find("is in NVLink domain nvl"), std::string::npos) << env.out << env.err;
  EXPECT_EQ(env.out.find("NCCL_MNNVL_ENABLE="), std::string::npos) << "nothing set: NCCL's default detects it";
}

TEST_F(NvlinkCli, SlurmBlockWritesOneBlockPerDomain) {
  ProcessResult conf = RunTopolaunch({"discover", "--topology", dir_.File("topology.json"), "--format", "slurm-block"});
  ASSERT_EQ(conf.exit_code, 0) << conf.Describe();
  size_t blocks = 0;
  for (size_t at = conf.out.find("\nBlockName="); at != std::string::npos; at = conf.out.find("\nBlockName=", at + 1)) ++blocks;
  EXPECT_EQ(blocks, 2u) << conf.out;
  EXPECT_NE(conf.out.find("\nBlockSizes=17,34\n"), std::string::npos) << conf.out;
  EXPECT_NE(conf.out.find(registering_), std::string::npos) << "named as left out";

  ProcessResult none = RunTopolaunch({"discover", "--fabric", dir_.File("fabric.ibnet"), "--no-layout", "--format", "slurm-block"});
  EXPECT_EQ(none.exit_code, 2) << none.Describe();
  EXPECT_NE(none.err.find("no NVLink domain"), std::string::npos) << none.err;
}

TEST_F(NvlinkCli, TwoLayoutsForOneHostAreRefused) {
  fs::copy_file(TestDataDir() + "/hwloc/llnl-pascal-2xE5v4-2xP100-CX5.xml", dir_.File("layouts/" + split_ + ".xml"));
  ProcessResult refused = RunTopolaunch({"discover", "--fabric", dir_.File("fabric.ibnet"), "--layout-dir", dir_.File("layouts")});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find(split_ + " has a layout in " + split_ + ".json too"), std::string::npos) << refused.err;
  Write(dir_.File("layouts/" + split_ + ".xml"), "");
  fs::remove(dir_.File("layouts/" + split_ + ".xml"));
  Write(dir_.File("layouts/" + split_ + ".json"), "{\"hostname\": 3}");
  refused = RunTopolaunch({"discover", "--fabric", dir_.File("fabric.ibnet"), "--layout-dir", dir_.File("layouts")});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find(split_ + ".json: $.hostname"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace topolaunch::testing
