#include "rankmap/bindings.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace topolaunch {
namespace {

std::vector<int> Cpus(std::string_view list) { return *ParseCpuList(list, "test"); }

// Two sockets, x86 numbering (SMT siblings offset by 16); GPUs 0-1 and NIC
// mlx5_0 behind one PCIe switch on socket 0, GPUs 2-3 and mlx5_1 on socket 1;
// mlx5_2 (an Ethernet port of a card on GPU 0's switch) is not on the fabric.
HostLayout TwoSocketLayout() {
  HostLayout l;
  l.cores = 16;
  l.pus = 32;
  l.numa_nodes = {{0, 0, Cpus("0-7,16-23"), 0}, {1, 1, Cpus("8-15,24-31"), 0}};
  for (int i = 0; i < 4; ++i) {
    Gpu g;
    g.pci_bus_id = fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1));
    g.numa = i / 2;
    l.gpus.push_back(g);
  }
  for (int i = 0; i < 3; ++i) {
    Nic n;
    n.name = fmt::format("mlx5_{}", i);
    n.kind = "openfabrics";
    n.numa = i == 1 ? 1 : 0;
    l.nics.push_back(n);
  }
  for (int g = 0; g < 4; ++g)
    for (int n = 0; n < 3; ++n) {
      bool near = (n == 0 && g < 2) || (n == 1 && g >= 2) || (n == 2 && g == 0);
      bool same_socket = (n == 1) == (g >= 2);
      l.gpu_nic_paths.push_back({l.gpus[g].pci_bus_id, l.nics[n].name,
                                 near ? PcieRelation::kSamePcieSwitch
                                      : same_socket ? PcieRelation::kSameSocket : PcieRelation::kAcrossSockets});
    }
  return l;
}

struct Expect {
  std::string gpu;
  std::optional<int> numa;
  std::string cpus;
  std::string nic;
};

void ExpectRanks(const HostBindings& b, const std::vector<Expect>& want, const std::string& what) {
  ASSERT_EQ(b.ranks.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(b.ranks[i].local_rank, static_cast<int>(i)) << what;
    EXPECT_EQ(b.ranks[i].gpu, want[i].gpu) << what << " rank " << i;
    EXPECT_EQ(b.ranks[i].numa, want[i].numa) << what << " rank " << i;
    EXPECT_EQ(FormatCpuList(b.ranks[i].cpus), want[i].cpus) << what << " rank " << i;
    EXPECT_EQ(b.ranks[i].nic, want[i].nic) << what << " rank " << i;
  }
}

TEST(BindingsTest, GpuRanksGetTheirNumaShareAndNearestNic) {
  HostLayout layout = TwoSocketLayout();
  Result<HostBindings> b = ComputeBindings(&layout, "n1", {4, std::nullopt, {"mlx5_0", "mlx5_1"}});
  ASSERT_TRUE(b.ok());
  ExpectRanks(*b, {{"0000:10:00.0", 0, "0-3,16-19", "mlx5_0"},
                   {"0000:20:00.0", 0, "4-7,20-23", "mlx5_0"},
                   {"0000:30:00.0", 1, "8-11,24-27", "mlx5_1"},
                   {"0000:40:00.0", 1, "12-15,28-31", "mlx5_1"}}, "all GPUs");
  EXPECT_TRUE(b->notes.empty());
}

TEST(BindingsTest, WithoutFabricDevicesEveryRdmaNicCountsAndLoadSpreads) {
  HostLayout layout = TwoSocketLayout();
  Result<HostBindings> b = ComputeBindings(&layout, "n1", {2, std::nullopt, {}});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ranks[0].nic, "mlx5_0");  // mlx5_0 and mlx5_2 tie; name first
  EXPECT_EQ(b->ranks[1].nic, "mlx5_0");  // GPU 1 is near mlx5_0 only
}

TEST(BindingsTest, FewerRanksSubsetsAndCpuHosts) {
  HostLayout layout = TwoSocketLayout();
  Result<HostBindings> two = ComputeBindings(&layout, "n1", {2, std::nullopt, {"mlx5_0", "mlx5_1"}});
  ASSERT_TRUE(two.ok());
  ExpectRanks(*two, {{"0000:10:00.0", 0, "0-3,16-19", "mlx5_0"}, {"0000:20:00.0", 0, "4-7,20-23", "mlx5_0"}}, "2 of 4");
  ASSERT_EQ(two->notes.size(), 1u);
  EXPECT_NE(two->notes[0].find("2 of 4 visible GPU(s) left idle"), std::string::npos);

  Result<HostBindings> subset = ComputeBindings(&layout, "n1", {2, std::vector<int>{1, 3}, {"mlx5_0", "mlx5_1"}});
  ASSERT_TRUE(subset.ok());
  ExpectRanks(*subset, {{"0000:20:00.0", 0, "0-7,16-23", "mlx5_0"}, {"0000:40:00.0", 1, "8-15,24-31", "mlx5_1"}}, "subset");
  EXPECT_EQ(subset->ranks[1].cuda_index, 1);

  HostLayout cpu_only = layout;
  cpu_only.gpus.clear();
  cpu_only.gpu_nic_paths.clear();
  Result<HostBindings> cpu = ComputeBindings(&cpu_only, "n1", {4, std::nullopt, {"mlx5_0", "mlx5_1"}});
  ASSERT_TRUE(cpu.ok());
  ExpectRanks(*cpu, {{"", 0, "0-3,16-19", "mlx5_0"}, {"", 0, "4-7,20-23", "mlx5_0"},
                     {"", 1, "8-11,24-27", "mlx5_1"}, {"", 1, "12-15,28-31", "mlx5_1"}}, "cpu");
  Result<HostBindings> none_visible = ComputeBindings(&layout, "n1", {2, std::vector<int>{}, {}});
  ASSERT_TRUE(none_visible.ok());
  EXPECT_EQ(none_visible->ranks[1].numa, 1);
}

TEST(BindingsTest, ErrorsAndUnknownLayout) {
  HostLayout layout = TwoSocketLayout();
  Result<HostBindings> too_many = ComputeBindings(&layout, "n1", {5, std::nullopt, {}});
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().code, ErrorCode::kBadUsage);
  EXPECT_NE(too_many.error().Message().find("5 ranks per node but 4 GPU(s)"), std::string::npos);
  Result<HostBindings> bad_index = ComputeBindings(&layout, "n1", {1, std::vector<int>{7}, {}});
  ASSERT_FALSE(bad_index.ok());
  EXPECT_EQ(bad_index.error().code, ErrorCode::kBadInput);
  Result<HostBindings> unknown = ComputeBindings(nullptr, "n9", {3, std::nullopt, {}});
  ASSERT_TRUE(unknown.ok());
  ExpectRanks(*unknown, {{"", std::nullopt, "", ""}, {"", std::nullopt, "", ""}, {"", std::nullopt, "", ""}}, "unknown");
  EXPECT_NE(unknown->notes.at(0).find("n9: layout unknown"), std::string::npos);
}

TEST(BindingsTest, SplitCpusKeepsCoresWhole) {
  struct Case {
    std::string cpus;
    int ranks;
    int threads_per_core;
    std::vector<std::string> parts;
  };
  std::vector<Case> cases = {
      {"0-15", 4, 1, {"0-3", "4-7", "8-11", "12-15"}},
      {"0-7,16-23", 2, 2, {"0-3,16-19", "4-7,20-23"}},        // x86 sibling numbering
      {"0-7,16-23", 3, 2, {"0-1,16-17", "2-4,18-20", "5-7,21-23"}},
      {"0-7,16-23", 2, 1, {"0-7", "16-23"}},                  // no SMT: plain halves
      {"0-1,8-9,16-17,24-25", 2, 2, {"0-1,8-9", "16-17,24-25"}},  // POWER: adjacent siblings
      {"8-87", 2, 4, {"8-47", "48-87"}},
      {"0-11", 5, 2, {"0-1", "2-3", "4-5", "6-7", "8-11"}},   // whole cores, uneven
      {"0-2", 2, 1, {"0", "1-2"}},
      {"0,8", 4, 1, {"0,8", "0,8", "0,8", "0,8"}},            // fewer PUs than ranks: shared
  };
  for (const Case& c : cases) {
    std::vector<std::string> got;
    for (const auto& part : SplitCpus(Cpus(c.cpus), c.ranks, c.threads_per_core)) got.push_back(FormatCpuList(part));
    EXPECT_EQ(got, c.parts) << c.cpus << " / " << c.ranks;
  }
}

TEST(BindingsTest, NumactlArgsAndCudaVisibleDevices) {
  RankBinding r;
  EXPECT_TRUE(NumactlArgs(r).empty());
  r.numa = 1;
  r.cpus = Cpus("8-11,24-27");
  EXPECT_EQ(NumactlArgs(r), (std::vector<std::string>{"numactl", "--physcpubind=8-11,24-27", "--membind=1", "--"}));
  EXPECT_EQ(*ParseCudaVisibleDevices("0,2,3"), (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(ParseCudaVisibleDevices("")->empty());
  for (std::string bad : {"GPU-8a1b", "0,,1", "1,1", "-1"}) EXPECT_FALSE(ParseCudaVisibleDevices(bad).ok()) << bad;
}

}  // namespace
}  // namespace topolaunch
