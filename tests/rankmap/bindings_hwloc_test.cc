// Bindings on real machines' layouts (hwloc XML from tests/data/hwloc),
// loaded through the real hwloc source.
#include <dirent.h>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "discover/hwloc_layout_source.h"
#include "rankmap/bindings.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

std::vector<std::string> XmlFiles() {
  std::vector<std::string> files;
  std::string hwloc = testing::TestDataDir() + "/hwloc";
  if (DIR* d = opendir(hwloc.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 4 && name.ends_with(".xml")) files.push_back(hwloc + "/" + name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

const NumaNode* Numa(const HostLayout& l, int os_index) {
  for (const NumaNode& n : l.numa_nodes) if (n.os_index == os_index) return &n;
  return nullptr;
}

// On every real layout: each rank's CPUs lie in its NUMA node, ranks on one
// node do not share CPUs, GPUs follow PCI order, and the NIC is as near as
// any NIC to that GPU.
TEST(BindingsOnRealLayouts, EveryRankStaysOnItsNumaNodeWithTheNearestNic) {
  std::vector<std::string> files = XmlFiles();
  ASSERT_GE(files.size(), 5u) << "tests/data/hwloc is missing its XML files";
  for (const std::string& file : files) {
    Result<HostLayout> layout = HwlocLayoutSource::FromXmlFile(file).LoadLayout();
    ASSERT_TRUE(layout.ok()) << file << ": " << layout.error().Message();
    int nproc = layout->gpus.empty() ? 4 : static_cast<int>(layout->gpus.size());
    Result<HostBindings> b = ComputeBindings(&*layout, "h", {nproc, std::nullopt, {}});
    ASSERT_TRUE(b.ok()) << file << ": " << b.error().Message();
    std::set<int> used;
    for (const RankBinding& r : b->ranks) {
      SCOPED_TRACE(file + " rank " + std::to_string(r.local_rank));
      if (!layout->gpus.empty()) {
        EXPECT_EQ(r.gpu, layout->gpus[r.local_rank].pci_bus_id);
      }
      ASSERT_TRUE(r.numa.has_value());
      const NumaNode* node = Numa(*layout, *r.numa);
      ASSERT_NE(node, nullptr);
      EXPECT_FALSE(r.cpus.empty());
      for (int cpu : r.cpus) {
        EXPECT_TRUE(std::binary_search(node->cpus.begin(), node->cpus.end(), cpu)) << cpu;
        EXPECT_TRUE(used.insert(cpu).second) << "cpu " << cpu << " given twice";
      }
      EXPECT_FALSE(NumactlArgs(r).empty());
      if (r.gpu.empty() || r.nic.empty()) continue;
      PcieRelation chosen = PcieRelation::kUnknown, best = PcieRelation::kUnknown;
      for (const GpuNicPath& p : layout->gpu_nic_paths) {
        if (p.gpu != r.gpu) continue;
        best = std::min(best, p.relation);
        if (p.nic == r.nic) chosen = p.relation;
      }
      EXPECT_EQ(chosen, best);
    }
  }
}

// Named expectations on machines whose wiring is documented.
TEST(BindingsOnRealLayouts, KnownMachines) {
  struct Case {
    std::string file;
    std::vector<std::string> nics;    // per local rank
    std::vector<std::string> cpus;
  };
  std::vector<Case> cases = {
      // JUWELS Booster: one HDR HCA per A100, each on the GPU's NUMA node.
      {"jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml", {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"},
       {"18-23,66-71", "6-11,54-59", "42-47,90-95", "30-35,78-83"}},
      // JUWELS Cluster GPU node: two V100s and one EDR HCA per socket.
      {"jsc-juwels-cluster-gpu-2xGold6148-4xV100-plx-2xEDR.xml", {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"},
       {"0-9,40-49", "10-19,50-59", "20-29,60-69", "30-39,70-79"}},
  };
  for (const Case& c : cases) {
    Result<HostLayout> layout = HwlocLayoutSource::FromXmlFile(testing::TestDataDir() + "/hwloc/" + c.file).LoadLayout();
    ASSERT_TRUE(layout.ok()) << layout.error().Message();
    Result<HostBindings> b = ComputeBindings(&*layout, "h", {4, std::nullopt, {}});
    ASSERT_TRUE(b.ok()) << c.file;
    for (size_t i = 0; i < c.nics.size(); ++i) {
      EXPECT_EQ(b->ranks[i].nic, c.nics[i]) << c.file << " rank " << i;
      EXPECT_EQ(FormatCpuList(b->ranks[i].cpus), c.cpus[i]) << c.file << " rank " << i;
    }
  }
}

}  // namespace
}  // namespace topolaunch
