// The rank order on real fabric dumps (tests/data/ibnet): every host of
// every dump, given in reverse order, must meet the bound at every level.
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "discover/ibnetdiscover_parser.h"
#include "rankmap/rank_map.h"
#include "rankmap/ring_metrics.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

TEST(RankMapOnRealDumps, CrossingsMeetTheBoundAtEveryLevel) {
  std::vector<std::string> files;
  std::string ibnet = testing::TestDataDir() + "/ibnet";
  if (DIR* d = opendir(ibnet.c_str())) {
    while (dirent* e = readdir(d)) if (std::string(e->d_name).ends_with(".ibnet")) files.push_back(e->d_name);
    closedir(d);
  }
  ASSERT_FALSE(files.empty()) << "no .ibnet dumps in " << ibnet;
  int planned = 0;
  for (const std::string& file : files) {
    std::stringstream text;
    text << std::ifstream(ibnet + "/" + file).rdbuf();
    Result<Fabric> fabric = ParseIbnetdiscover(text.str(), file);
    ASSERT_TRUE(fabric.ok()) << file;
    Topology topology = BuildTopology(*fabric, {}, {});
    FabricGroups groups = ComputeFabricGroups(topology);
    std::vector<std::string> hosts;
    for (const TopologyHost& h : topology.hosts) hosts.push_back(h.name);
    std::reverse(hosts.begin(), hosts.end());
    Result<RankMap> map = ComputeRankMap(groups, hosts, true);
    ASSERT_TRUE(map.ok()) << file;
    PlanMetrics m = ComputeMetrics(&groups, map->order, hosts);
    for (const LevelCrossings& l : m.levels) EXPECT_EQ(l.crossings, l.lower_bound) << file << " level " << l.level;
    std::sort(hosts.begin(), hosts.end());
    Result<RankMap> again = ComputeRankMap(groups, hosts, true);
    EXPECT_EQ(again->order, map->order) << file;
    planned += !hosts.empty();
  }
  EXPECT_GE(planned, 3);
}

}  // namespace
}  // namespace topolaunch
