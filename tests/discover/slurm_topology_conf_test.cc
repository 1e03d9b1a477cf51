// The generated topology.conf against the real Slurm: a private slurmctld
// (topology/tree) must start with it -- it is fatal on duplicate or unknown
// switches -- without topology warnings, and `scontrol show topology` must
// show the switches, levels and nodes we meant.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "core/text_io.h"
#include "discover/ibnetdiscover_parser.h"
#include "discover/slurm_topology_writer.h"
#include "support/slurm_harness.h"
#include "support/test_paths.h"
#include "support/topology_samples.h"

namespace topolaunch::testing {
namespace {

using HostSet = std::set<std::string>;

struct SwitchLine {
  int level = -1;  // Slurm's numbering: leaves are 0
  std::string nodes;
  std::string switches;
};

// "SwitchName=a Level=0 LinkSpeed=1 Nodes=n[1-2]" lines (ours lack Level).
std::map<std::string, SwitchLine> ParseSwitchLines(const std::string& text) {
  std::map<std::string, SwitchLine> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("SwitchName=")) continue;
    std::istringstream words(line);
    std::string name;
    SwitchLine s;
    for (std::string word; words >> word;) {
      size_t eq = word.find('=');
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "SwitchName") name = value;
      else if (key == "Level") s.level = std::stoi(value);
      else if (key == "Nodes") s.nodes = value;
      else if (key == "Switches") s.switches = value;
    }
    out[name] = s;
  }
  return out;
}

HostSet Expand(const std::string& list) {
  Result<std::vector<std::string>> names = ExpandHostList(list);
  EXPECT_TRUE(names.ok()) << names.error().Message();
  return names.ok() ? HostSet(names->begin(), names->end()) : HostSet{};
}

// Hosts under a switch of our conf, and its level in Slurm's numbering.
std::pair<HostSet, int> Below(const std::map<std::string, SwitchLine>& conf, const std::string& name) {
  const SwitchLine& s = conf.at(name);
  if (!s.nodes.empty()) return {Expand(s.nodes), 0};
  HostSet hosts;
  int level = 0;
  for (const std::string& child : Expand(s.switches)) {
    auto [child_hosts, child_level] = Below(conf, child);
    hosts.insert(child_hosts.begin(), child_hosts.end());
    level = std::max(level, child_level + 1);
  }
  return {hosts, level};
}

// Starts slurmctld on `conf` and checks what it made of it.
void ExpectSlurmReads(const std::string& conf) {
  std::map<std::string, SwitchLine> ours = ParseSwitchLines(conf);
  ASSERT_FALSE(ours.empty()) << conf;
  std::vector<std::string> hosts;
  for (const auto& [name, s] : ours)
    for (const std::string& host : Expand(s.nodes)) hosts.push_back(host);
  std::sort(hosts.begin(), hosts.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });

  Result<std::unique_ptr<SlurmController>> ctld = SlurmController::Start(CompressHostList(hosts), conf);
  ASSERT_TRUE(ctld.ok()) << ctld.error().Message() << "\ntopology.conf:\n" << conf;
  ProcessResult shown = (*ctld)->RunScontrol({"show", "topology"});
  ASSERT_EQ(shown.exit_code, 0) << shown.Describe();
  std::map<std::string, SwitchLine> theirs = ParseSwitchLines(shown.out);

  ASSERT_EQ(theirs.size(), ours.size()) << shown.out;
  for (const auto& [name, mine] : ours) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(theirs.contains(name)) << shown.out;
    const SwitchLine& slurm = theirs.at(name);
    auto [expected_hosts, expected_level] = Below(ours, name);
    EXPECT_EQ(slurm.level, expected_level);
    EXPECT_EQ(Expand(slurm.nodes), expected_hosts);
    if (!mine.switches.empty()) {
      EXPECT_EQ(Expand(slurm.switches), Expand(mine.switches));
    }
  }
  std::string log = (*ctld)->Log();
  for (const char* warning : {"Multiple leaf switches", "switches lack access", "Invalid hostnames", "has no nodes",
                              "no switch can reach all nodes"})
    EXPECT_EQ(log.find(warning), std::string::npos) << warning << " in slurmctld's log:\n" << Tail(log, 2000);
}

class SlurmTopologyConf : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(SlurmController::Available()) << "slurmctld/scontrol not installed (bash tests/install_deps.sh test)";
  }
};

TEST_F(SlurmTopologyConf, HandBuiltFabricsAreAccepted) {
  HandTopology collisions;
  collisions.Switch(0x0002c90300a1b2c3, "Quantum Mellanox Technologies", 1);
  collisions.Switch(0x0002c90300a1b2c4, "Quantum Mellanox Technologies", 1);
  collisions.Switch(0x0002c90300a1b2c5, "", 1).Switch(0x0002c90300a1b2c6, "ib core#2, row=1", 2);
  collisions.Hca("n1", 0x21, "mlx5_0", 0x0002c90300a1b2c3).Hca("n2", 0x22, "mlx5_0", 0x0002c90300a1b2c4);
  collisions.Hca("n3", 0x23, "mlx5_0", 0x0002c90300a1b2c5);
  collisions.Cable(0x0002c90300a1b2c3, 0x0002c90300a1b2c6).Cable(0x0002c90300a1b2c4, 0x0002c90300a1b2c6);
  collisions.Cable(0x0002c90300a1b2c5, 0x0002c90300a1b2c6);
  const std::pair<const char*, Topology> kFabrics[] = {{"two levels", TwoLevelTopology()},
                                                       {"three levels", ThreeLevelTopology()},
                                                       {"multi-rail", MultiRailTopology()},
                                                       {"hosted spine", HostedSpineTopology()},
                                                       {"leaf mesh", LeafMeshTopology()},
                                                       {"name collisions", collisions.Build()}};
  for (const auto& [what, topology] : kFabrics) {
    SCOPED_TRACE(what);
    Result<std::string> conf = FormatSlurmTopologyConf(topology);
    ASSERT_TRUE(conf.ok()) << conf.error().Message();
    ExpectSlurmReads(*conf);
  }
}

TEST_F(SlurmTopologyConf, RealFabricDumpsAreAccepted) {
  // The stage cluster has dual-homed hosts; the lab fabric names its
  // switches "MF0;...", has a SHARP node and loop-back cables; the Quantum
  // mesh has 60 switches of one name, three levels and many parents each.
  for (const char* file : {"stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet",
                           "nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet",
                           "doc-nvidia-ibdiagpath-2sw-6ca.ibnet", "quantum-hdr-2019-60sw-2ca-crlf.ibnet"}) {
    SCOPED_TRACE(file);
    Result<std::string> text = ReadTextFile(TestDataDir() + "/ibnet/" + file);
    ASSERT_TRUE(text.ok()) << text.error().Message();
    Result<Fabric> fabric = ParseIbnetdiscover(*text, file);
    ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
    Result<std::string> conf = FormatSlurmTopologyConf(BuildTopology(*fabric, {}, {}));
    ASSERT_TRUE(conf.ok()) << conf.error().Message();
    ExpectSlurmReads(*conf);
  }
}

// Without a common parent Slurm runs no job across the leaves, and says so:
// why the writer adds a root.
TEST_F(SlurmTopologyConf, SlurmctldWarnsAboutLeavesWithoutACommonParent) {
  Result<std::unique_ptr<SlurmController>> ctld =
      SlurmController::Start("n[1-2]", "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n2\n");
  ASSERT_TRUE(ctld.ok()) << ctld.error().Message();
  EXPECT_NE((*ctld)->Log().find("no switch can reach all nodes through its descendants"), std::string::npos)
      << (*ctld)->Log();
}

// The harness must see Slurm refuse a bad file, or the tests above prove nothing.
TEST_F(SlurmTopologyConf, SlurmctldRefusesADuplicateSwitch) {
  Result<std::unique_ptr<SlurmController>> ctld =
      SlurmController::Start("n[1-2]", "SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n");
  ASSERT_FALSE(ctld.ok());
  EXPECT_NE(ctld.error().Message().find("has already been defined"), std::string::npos) << ctld.error().Message();
}

// Why the writer lists each host once: Slurm flags a node on two leaves.
TEST_F(SlurmTopologyConf, SlurmctldWarnsAboutANodeOnTwoLeaves) {
  Result<std::unique_ptr<SlurmController>> ctld =
      SlurmController::Start("n[1-2]", "SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n");
  ASSERT_TRUE(ctld.ok()) << ctld.error().Message();
  EXPECT_NE((*ctld)->Log().find("Multiple leaf switches contain nodes: n2"), std::string::npos) << (*ctld)->Log();
}

}  // namespace
}  // namespace topolaunch::testing
