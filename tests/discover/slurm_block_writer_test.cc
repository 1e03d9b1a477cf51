// topology.conf for topology/block: one block per NVLink domain, in the IB
// fabric's order, BlockSizes with its reason; every file checked against
// the grammar topology.conf(5) documents. Debian 12's Slurm is 22.05, which
// predates topology/block (23.11), so no slurmctld here can read these
// files: the real check waits for a newer Slurm, and until then this
// checker encodes the man page and block_record.c's rules.
#include "discover/slurm_block_writer.h"

#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "rankmap/fabric_groups.h"
#include "rankmap/rank_map.h"
#include "rankmap/rankmap_test_util.h"
#include "support/nvlink_racks.h"

namespace topolaunch {
namespace {

using testing::HostNames;
using testing::PutInRacks;
using testing::TopologyOf;

struct BlockConf {
  std::vector<std::pair<std::string, std::vector<std::string>>> blocks;  // file order
  std::vector<size_t> sizes;
};

// topology.conf(5), Slurm 24.05+: "BlockName=<name> Nodes=<hostlist>" per
// block, names unique; one "BlockSizes=" line: the planning base block
// size first, "successive BlockSizes must be a power of two larger than the
// prior values" (block_record.c: a multiple of the base, log2 of the ratio
// integral, at most 16 levels); "each block must have at least the
// planning base block size count of nodes"; a node in at most one block.
::testing::AssertionResult ParseBlockConf(const std::string& text, BlockConf& out) {
  std::istringstream in(text);
  std::string line;
  std::set<std::string> names, nodes;
  int sizes_lines = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    auto fail = [&](const std::string& why) {
      return ::testing::AssertionFailure() << "line " << number << " \"" << line << "\": " << why;
    };
    if (line.rfind("BlockSizes=", 0) == 0) {
      if (++sizes_lines > 1) return fail("BlockSizes given twice");
      std::stringstream values(line.substr(11));
      for (std::string v; std::getline(values, v, ',');) {
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return fail("not a number: " + v);
        out.sizes.push_back(std::stoul(v));
      }
      continue;
    }
    std::istringstream words(line);
    std::string name, list, extra;
    words >> name >> list >> extra;
    if (name.rfind("BlockName=", 0) != 0 || list.rfind("Nodes=", 0) != 0 || !extra.empty())
      return fail("expected BlockName=NAME Nodes=HOSTLIST");
    name = name.substr(10);
    if (name.empty() || !names.insert(name).second) return fail("block name empty or not unique");
    Result<std::vector<std::string>> hosts = ExpandHostList(list.substr(6));
    if (!hosts.ok() || hosts->empty()) return fail("Nodes= is not a host list");
    for (const std::string& h : *hosts)
      if (!nodes.insert(h).second) return fail(h + " is in two blocks");
    out.blocks.push_back({name, *hosts});
  }
  if (out.blocks.empty()) return ::testing::AssertionFailure() << "no block";
  if (out.sizes.empty() || out.sizes.size() > 16) return ::testing::AssertionFailure() << "BlockSizes: 1 to 16 values";
  size_t base = out.sizes[0];
  if (base == 0) return ::testing::AssertionFailure() << "a zero base";
  for (size_t i = 1; i < out.sizes.size(); ++i) {
    size_t ratio = out.sizes[i] / base;
    if (out.sizes[i] <= out.sizes[i - 1] || out.sizes[i] % base || (ratio & (ratio - 1)))
      return ::testing::AssertionFailure() << "BlockSizes value " << out.sizes[i] << " is not a power of two times " << base;
  }
  for (const auto& [name, hosts] : out.blocks)
    if (hosts.size() < base) return ::testing::AssertionFailure() << name << " holds fewer nodes than the base " << base;
  return ::testing::AssertionSuccess();
}

// 4 racks of 18 on 4 leaves, numbered against the cabling: rack r is the
// hosts of leaf (r * 3) % 4.
Topology FourRacks() {
  Topology t = TopologyOf(testing::TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 18, .spines = 2}));
  FabricGroups groups = ComputeFabricGroups(t);
  std::map<int, std::vector<std::string>> by_leaf;
  for (const std::string& h : NaturalSorted(HostNames(t))) by_leaf[groups.hosts.at(h).leaf_group].push_back(h);
  std::map<std::string, int> racks;
  for (auto& [leaf, hosts] : by_leaf)
    for (const std::string& h : hosts) racks[h] = (leaf * 3) % 4;
  PutInRacks(t, racks);
  return t;
}

TEST(SlurmBlockConf, OneBlockPerDomainInTheFabricOrder) {
  Topology t = FourRacks();
  t.generated = {"topolaunch 0.1.0", "2026-12-03T00:00:00Z", "ibnetdiscover"};
  Result<std::string> conf = FormatSlurmBlockConf(t);
  ASSERT_TRUE(conf.ok()) << conf.error().Message();
  BlockConf parsed;
  ASSERT_TRUE(ParseBlockConf(*conf, parsed)) << *conf;
  ASSERT_EQ(parsed.blocks.size(), 4u);
  EXPECT_EQ(parsed.sizes, (std::vector<size_t>{18, 36, 72}));
  // The blocks follow the plan's order: the leaves' order, i.e. the first
  // block holds node01, whatever the racks' numbers.
  EXPECT_EQ(parsed.blocks[0].second.front(), "node01") << *conf;
  std::set<std::string> all;
  for (const auto& [name, hosts] : parsed.blocks) {
    EXPECT_EQ(hosts.size(), 18u);
    all.insert(hosts.begin(), hosts.end());
  }
  EXPECT_EQ(all.size(), 72u);
  EXPECT_NE(conf->find("TopologyPlugin=topology/block"), std::string::npos);
  EXPECT_NE(conf->find("# BlockSizes: the base is the smallest block (18 node(s))"), std::string::npos) << *conf;
  EXPECT_NE(conf->find("clique 1 of cluster " + testing::RackUuid(0)), std::string::npos);
}

TEST(SlurmBlockConf, UnevenRacksAndHostsInNoDomain) {
  Topology t = FourRacks();
  // Two trays of rack 0 drained from the layouts, one host without fabric info.
  std::vector<std::string> hosts = NaturalSorted(HostNames(t));
  HostLayout hgx = testing::TrayLayout();
  for (Gpu& g : hgx.gpus) g.nvlink_fabric.reset();
  AttachLayout(t, hosts[0], hgx);
  AttachLayout(t, hosts[1], hgx);
  AttachLayout(t, "login1", hgx);
  Result<std::string> conf = FormatSlurmBlockConf(t);
  ASSERT_TRUE(conf.ok()) << conf.error().Message();
  BlockConf parsed;
  ASSERT_TRUE(ParseBlockConf(*conf, parsed)) << *conf;
  EXPECT_EQ(parsed.sizes, (std::vector<size_t>{16, 32, 64})) << "the smallest block is the base";
  EXPECT_NE(conf->find("# left out, in no NVLink domain"), std::string::npos) << *conf;
  EXPECT_NE(conf->find("login1"), std::string::npos);
}

TEST(SlurmBlockConf, SlurmNodesKeepsOnlyThoseHosts) {
  Topology t = FourRacks();
  std::set<std::string> nodes;
  for (const std::string& h : HostNames(t)) if (h <= "node36") nodes.insert(h);
  Result<std::string> conf = FormatSlurmBlockConf(t, {nodes});
  ASSERT_TRUE(conf.ok()) << conf.error().Message();
  BlockConf parsed;
  ASSERT_TRUE(ParseBlockConf(*conf, parsed)) << *conf;
  EXPECT_EQ(parsed.blocks.size(), 2u);
  EXPECT_EQ(parsed.sizes, (std::vector<size_t>{18, 36}));
}

TEST(SlurmBlockConf, NoDomainIsAClearError) {
  Topology t = TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 4, .spines = 1}));
  Result<std::string> conf = FormatSlurmBlockConf(t);
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.error().code, ErrorCode::kBadInput);
  EXPECT_NE(conf.error().Message().find("--format slurm writes the switch tree"), std::string::npos) << conf.error().Message();
}

TEST(SlurmBlockConf, BlockSizesDoubleUpToTheNumberOfBlocks) {
  EXPECT_EQ(ChooseBlockSizes({}), std::vector<size_t>{});
  EXPECT_EQ(ChooseBlockSizes({18}), std::vector<size_t>{18});
  EXPECT_EQ(ChooseBlockSizes({18, 18, 18}), (std::vector<size_t>{18, 36}));
  EXPECT_EQ(ChooseBlockSizes(std::vector<size_t>(9, 18)), (std::vector<size_t>{18, 36, 72, 144}));
  EXPECT_EQ(ChooseBlockSizes({18, 17, 16, 18}), (std::vector<size_t>{16, 32, 64}));
  EXPECT_EQ(ChooseBlockSizes(std::vector<size_t>(100000, 1)).size(), 16u) << "Slurm's limit of 16 levels";
}

TEST(SlurmBlockConf, TheCheckerRefusesWhatSlurmRefuses) {
  BlockConf out;
  EXPECT_FALSE(ParseBlockConf("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n", out)) << "12 is not 4 x 2^k";
  out = {};
  EXPECT_FALSE(ParseBlockConf("BlockName=b1 Nodes=n[1-4]\nBlockName=b1 Nodes=n[5-8]\nBlockSizes=4\n", out));
  out = {};
  EXPECT_FALSE(ParseBlockConf("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-7]\nBlockSizes=4\n", out));
  out = {};
  EXPECT_FALSE(ParseBlockConf("BlockName=b1 Nodes=n[1-3]\nBlockSizes=4\n", out)) << "a block below the base";
  out = {};
  EXPECT_TRUE(ParseBlockConf("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n", out));
}

}  // namespace
}  // namespace topolaunch
