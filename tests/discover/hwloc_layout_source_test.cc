// HwlocLayoutSource against real hwloc: real machines' XML exports (facts
// below were read off the XML files and tests/data/hwloc/SOURCES.md), a synthetic
// topology made by lstopo, broken inputs, and the live-versus-XML contract.
#include "discover/hwloc_layout_source.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/layout_json.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

namespace fs = std::filesystem;
using testing::TestDataDir;
using testing::TempDir;

struct ExpectedPath {
  std::string gpu;
  std::string nic;
  PcieRelation relation;
};

struct Expected {
  std::string file;
  std::string hostname;
  std::string architecture;
  int packages, cores, pus;
  std::vector<std::pair<int, std::string>> numa;  // os_index, cpulist
  std::vector<std::string> gpus;                  // bus ids in order
  std::string gpu_vendors;                        // one letter per GPU: n(vidia) / a(md)
  std::string first_gpu_model;
  std::vector<std::string> first_gpu_os_devices;
  std::vector<std::string> nics;                  // names in order
  std::vector<ExpectedPath> paths;                // a sample of gpu_nic_paths
};

constexpr PcieRelation kSwitch = PcieRelation::kSamePcieSwitch;
constexpr PcieRelation kHostBridge = PcieRelation::kSameHostBridge;
constexpr PcieRelation kSocket = PcieRelation::kSameSocket;
constexpr PcieRelation kAcross = PcieRelation::kAcrossSockets;

// gtest prints parameters of failed tests; the file name says it all.
void PrintTo(const Expected& e, std::ostream* os) { *os << e.file; }

// clang-format off
const std::vector<Expected>& Machines() {
  static const std::vector<Expected> machines = {
      {"aws-g4dn-metal-2xXeon8259CL-8xT4-efa.xml", "gpu-st-g4dnmetal-1", "x86_64", 2, 48, 96,
       {{0, "0-23,48-71"}, {1, "24-47,72-95"}},
       {"0000:18:00.0", "0000:19:00.0", "0000:35:00.0", "0000:36:00.0",
        "0000:e7:00.0", "0000:e8:00.0", "0000:f4:00.0", "0000:f5:00.0"},
       "nnnnnnnn", "Tesla T4", {"cuda0", "nvml0", "opencl0d0"},
       {"eth0", "rdmap197s0"},  // ENA eth0 is a plain network port next to the EFA
       {{"0000:18:00.0", "rdmap197s0", kAcross}, {"0000:e7:00.0", "rdmap197s0", kSocket}}},
      {"deep-est-esb01-1xSilver4215-1xV100-mlx5-edr.xml", "dp-esb01", "x86_64", 1, 8, 16,
       {{0, "0-15"}},  // v1 file without a NUMANode: hwloc 2 makes one
       {"0000:65:00.0"}, "n", "", {},  // the ASPEED BMC VGA (1a03) is not a GPU
       {"eno1", "eno2", "mlx5_0"},
       {{"0000:65:00.0", "mlx5_0", kSocket}}},
      {"hwloc-conan-x9drg-2xE5-2650-3xM2075-CX4.xml", "conan", "x86_64", 2, 16, 32,
       {{0, "0-7,16-23"}, {1, "8-15,24-31"}},
       {"0000:03:00.0", "0000:83:00.0", "0000:84:00.0", "0000:84:00.1"}, "nnna",  // Matrox VGA left out
       "Tesla M2075 Dual-Slot Computing Processor Module", {},
       {"eth0", "eth1", "mlx5_0"},
       {{"0000:03:00.0", "mlx5_0", kAcross}, {"0000:83:00.0", "mlx5_0", kHostBridge},
        {"0000:84:00.0", "mlx5_0", kSwitch}, {"0000:84:00.1", "mlx5_0", kSwitch}}},
      {"hwloc-plafrim-mirage004-sl390s-2x6core-3xM2070-mlx4.xml", "mirage004", "x86_64", 2, 12, 24,
       {{0, "0,2,4,6,8,10,12,14,16,18,20,22"}, {1, "1,3,5,7,9,11,13,15,17,19,21,23"}},
       {"0000:06:00.0", "0000:11:00.0", "0000:14:00.0"}, "nnn", "", {},  // ATI ES1000 BMC VGA left out
       {"eth0", "eth1", "mlx4_0"},
       {{"0000:06:00.0", "mlx4_0", kHostBridge}, {"0000:14:00.0", "mlx4_0", kAcross}}},
      {"hwloc-power8-minsky-4xP100-nvlink-distances.xml", "drac-12.grenoble.grid5000.fr", "ppc64le", 2, 8, 16,
       {{0, "0-1,8-9,16-17,24-25"}, {1, "80-81,88-89,96-97,104-105"}},
       {"0002:01:00.0", "0003:01:00.0", "000a:01:00.0", "000b:01:00.0"}, "nnnn",
       "Tesla P100-SXM2-16GB", {"cuda0", "nvml0", "opencl0d0"},
       {}, {}},
      {"jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml", "jwb0004.juwels", "x86_64", 2, 48, 96,
       {{0, "0-5,48-53"}, {1, "6-11,54-59"}, {2, "12-17,60-65"}, {3, "18-23,66-71"},
        {4, "24-29,72-77"}, {5, "30-35,78-83"}, {6, "36-41,84-89"}, {7, "42-47,90-95"}},
       {"0000:03:00.0", "0000:44:00.0", "0000:84:00.0", "0000:c4:00.0"}, "nnnn", "", {},  // PCI only
       {"enp225s0f0", "enp225s0f1", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"},
       {{"0000:03:00.0", "mlx5_0", kSwitch}, {"0000:44:00.0", "mlx5_1", kSwitch},
        {"0000:84:00.0", "mlx5_2", kSwitch}, {"0000:c4:00.0", "mlx5_3", kSwitch},
        {"0000:03:00.0", "mlx5_1", kSocket}, {"0000:03:00.0", "mlx5_2", kAcross}}},
      {"jsc-juwels-cluster-gpu-2xGold6148-4xV100-plx-2xEDR.xml", "jwc09n003.juwels", "x86_64", 2, 40, 80,
       {{0, "0-19,40-59"}, {1, "20-39,60-79"}},
       {"0000:5d:00.0", "0000:5e:00.0", "0000:88:00.0", "0000:89:00.0"}, "nnnn", "", {},
       {"enp55s0f0", "enp55s0f1", "enp55s0f2", "enp55s0f3", "mlx5_0", "mlx5_1"},
       {{"0000:5d:00.0", "mlx5_0", kSwitch}, {"0000:5e:00.0", "mlx5_0", kSwitch},
        {"0000:88:00.0", "mlx5_1", kSwitch}, {"0000:5d:00.0", "mlx5_1", kAcross}}},
      {"llnl-lassen-power9-4xV100-4xCX5.xml", "lassen28", "ppc64le", 2, 40, 160,
       {{0, "8-87"}, {8, "96-175"}},
       {"0004:04:00.0", "0004:05:00.0", "0035:03:00.0", "0035:04:00.0"}, "nnnn",
       "Tesla V100-SXM2-16GB", {"cuda0", "nvml0"},
       {"enP5p1s0f0", "enP5p1s0f1", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"},
       {{"0004:04:00.0", "mlx5_0", kSocket}, {"0004:04:00.0", "mlx5_2", kAcross},
        {"0035:04:00.0", "mlx5_3", kSocket}}},
      {"llnl-pascal-2xE5v4-2xP100-CX5.xml", "pascal4", "x86_64", 2, 36, 72,
       {{0, "0-17,36-53"}, {1, "18-35,54-71"}},
       {"0000:04:00.0", "0000:07:00.0"}, "nn", "Tesla P100-PCIE-16GB", {"cuda0", "nvml0", "opencl0d0"},
       {"enp12s0f0", "enp12s0f1", "mlx5_0"},
       {{"0000:04:00.0", "mlx5_0", kSwitch}, {"0000:07:00.0", "mlx5_0", kSwitch}}},
      {"quanta-gh200-1socket-no-io.xml", "hopper1", "aarch64", 1, 72, 72,
       {{0, "0-71"}},
       {}, "", "", {},  // exported without I/O: no GPU, no NIC
       {}, {}},
  };
  return machines;
}
// clang-format on

const Nic* FindNic(const HostLayout& l, const std::string& name) {
  for (const Nic& n : l.nics)
    if (n.name == name) return &n;
  return nullptr;
}

class RealMachineXml : public ::testing::TestWithParam<Expected> {};

TEST_P(RealMachineXml, MatchesWhatTheFileSays) {
  std::string data = TestDataDir();
  const Expected& e = GetParam();
  Result<HostLayout> loaded = HwlocLayoutSource::FromXmlFile(data + "/hwloc/" + e.file).LoadLayout();
  ASSERT_TRUE(loaded.ok()) << loaded.error().Message();
  const HostLayout& l = *loaded;
  EXPECT_EQ(l.source, "hwloc-xml:" + e.file);
  EXPECT_EQ(l.hostname, e.hostname);
  EXPECT_EQ(l.architecture, e.architecture);
  EXPECT_EQ(l.packages, e.packages);
  EXPECT_EQ(l.cores, e.cores);
  EXPECT_EQ(l.pus, e.pus);
  EXPECT_FALSE(l.nvml.has_value()) << "NVML is only asked about the live machine";
  ASSERT_EQ(l.numa_nodes.size(), e.numa.size());
  size_t numa_cpus = 0;
  for (size_t i = 0; i < e.numa.size(); ++i) {
    EXPECT_EQ(l.numa_nodes[i].os_index, e.numa[i].first);
    EXPECT_EQ(FormatCpuList(l.numa_nodes[i].cpus), e.numa[i].second) << "NUMA " << e.numa[i].first;
    EXPECT_GT(l.numa_nodes[i].memory_bytes, 0u);
    EXPECT_GE(l.numa_nodes[i].package, 0);
    numa_cpus += l.numa_nodes[i].cpus.size();
  }
  EXPECT_EQ(numa_cpus, static_cast<size_t>(e.pus)) << "every PU belongs to exactly one NUMA node";
  std::vector<std::string> gpus;
  std::string vendors;
  std::set<int> numa_ids;
  for (const NumaNode& n : l.numa_nodes) numa_ids.insert(n.os_index);
  for (const Gpu& g : l.gpus) {
    gpus.push_back(g.pci_bus_id);
    vendors += g.vendor == "nvidia" ? 'n' : g.vendor == "amd" ? 'a' : '?';
    EXPECT_TRUE(numa_ids.count(g.numa)) << g.pci_bus_id << " numa " << g.numa;
  }
  EXPECT_EQ(gpus, e.gpus);
  EXPECT_EQ(vendors, e.gpu_vendors);
  if (!l.gpus.empty()) {
    EXPECT_EQ(l.gpus[0].model, e.first_gpu_model);
    EXPECT_EQ(l.gpus[0].os_devices, e.first_gpu_os_devices);
  }
  std::vector<std::string> nics;
  size_t rdma = 0;
  for (const Nic& n : l.nics) {
    nics.push_back(n.name);
    rdma += n.kind == "openfabrics";
  }
  EXPECT_EQ(nics, e.nics);
  EXPECT_EQ(l.gpu_nic_paths.size(), l.gpus.size() * rdma) << "one path per GPU x RDMA NIC";
  for (const ExpectedPath& p : e.paths) {
    auto it = std::find_if(l.gpu_nic_paths.begin(), l.gpu_nic_paths.end(),
                           [&](const GpuNicPath& q) { return q.gpu == p.gpu && q.nic == p.nic; });
    ASSERT_NE(it, l.gpu_nic_paths.end()) << p.gpu << " x " << p.nic;
    EXPECT_EQ(PcieRelationName(it->relation), PcieRelationName(p.relation)) << p.gpu << " x " << p.nic;
  }
  // The layout survives its JSON form unchanged.
  Result<HostLayout> back = LayoutFromJson(LayoutToJson(l), "$");
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, l);
}

INSTANTIATE_TEST_SUITE_P(TestData, RealMachineXml, ::testing::ValuesIn(Machines()),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name = info.param.file.substr(0, info.param.file.find('.'));
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(HwlocLayoutSource, EveryFileInTheDataSetHasExpectations) {
  std::string data = TestDataDir();
  std::set<std::string> known;
  for (const Expected& e : Machines()) known.insert(e.file);
  for (const auto& entry : fs::directory_iterator(data + "/hwloc")) {
    if (entry.path().extension() != ".xml") continue;
    EXPECT_TRUE(known.count(entry.path().filename().string())) << entry.path();
  }
}

TEST(HwlocLayoutSource, NicDetailsFromTheXml) {
  std::string data = TestDataDir();
  auto load = [&](const std::string& file) {
    Result<HostLayout> l = HwlocLayoutSource::FromXmlFile(data + "/hwloc/" + file).LoadLayout();
    EXPECT_TRUE(l.ok()) << l.error().Message();
    return l.ok() ? *l : HostLayout{};
  };
  HostLayout lassen = load("llnl-lassen-power9-4xV100-4xCX5.xml");
  const Nic* mlx = FindNic(lassen, "mlx5_1");
  ASSERT_NE(mlx, nullptr);
  EXPECT_EQ(mlx->kind, "openfabrics");
  EXPECT_EQ(mlx->pci_bus_id, "0003:01:00.1");
  EXPECT_EQ(mlx->netdevs, std::vector<std::string>{"hsi1"});
  EXPECT_EQ(mlx->node_guid, 0x506b4b03003ceee9ull);
  EXPECT_EQ(mlx->numa, 0);
  ASSERT_TRUE(mlx->link.has_value());
  EXPECT_NEAR(mlx->link->gbytes_per_s, 15.754, 0.001);
  EXPECT_EQ(lassen.gpus[2].numa, 8);

  HostLayout aws = load("aws-g4dn-metal-2xXeon8259CL-8xT4-efa.xml");
  const Nic* efa = FindNic(aws, "rdmap197s0");
  ASSERT_NE(efa, nullptr);
  EXPECT_EQ(efa->kind, "openfabrics");
  EXPECT_FALSE(efa->node_guid.has_value()) << "EFA reports an all-zero NodeGUID";
  EXPECT_EQ(efa->numa, 1);
  const Nic* ena = FindNic(aws, "eth0");
  ASSERT_NE(ena, nullptr);
  EXPECT_EQ(ena->kind, "network");
  EXPECT_EQ(ena->pci_bus_id, "0000:c6:00.0");

  HostLayout mirage = load("hwloc-plafrim-mirage004-sl390s-2x6core-3xM2070-mlx4.xml");
  const Nic* vpi = FindNic(mirage, "mlx4_0");
  ASSERT_NE(vpi, nullptr);
  EXPECT_EQ(vpi->netdevs, (std::vector<std::string>{"eth2", "ib0"}));
  EXPECT_EQ(FindNic(mirage, "eth2"), nullptr) << "a netdev of an RDMA function is not a NIC of its own";

  HostLayout booster = load("jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml");
  std::vector<int> numa;
  for (const Gpu& g : booster.gpus) numa.push_back(g.numa);
  EXPECT_EQ(numa, (std::vector<int>{3, 1, 7, 5}));
  EXPECT_EQ(FindNic(booster, "mlx5_0")->netdevs, std::vector<std::string>{"ib0"});
}

Result<HostLayout> LoadSynthetic(const TempDir& dir, const std::string& description) {
  std::string file = dir.File("synthetic.xml");
  std::string command = "lstopo --input \"" + description + "\" --of xml " + file + " 2>/dev/null";
  if (std::system(command.c_str()) != 0) return Error(ErrorCode::kUnavailable, "lstopo", "failed: " + command);
  return HwlocLayoutSource::FromXmlFile(file).LoadLayout();
}

TEST(HwlocLayoutSource, SyntheticTopologyFromLstopo) {
  TempDir dir;
  Result<HostLayout> l = LoadSynthetic(dir, "pack:2 numa:1 core:8 pu:2");
  ASSERT_TRUE(l.ok()) << l.error().Message();
  EXPECT_EQ(l->source, "hwloc-xml:synthetic.xml");
  EXPECT_EQ(l->packages, 2);
  EXPECT_EQ(l->cores, 16);
  EXPECT_EQ(l->pus, 32);
  ASSERT_EQ(l->numa_nodes.size(), 2u);
  EXPECT_EQ(FormatCpuList(l->numa_nodes[0].cpus), "0-15");
  EXPECT_EQ(FormatCpuList(l->numa_nodes[1].cpus), "16-31");
  EXPECT_EQ(l->numa_nodes[0].package, 0);
  EXPECT_EQ(l->numa_nodes[1].package, 1);
  EXPECT_TRUE(l->gpus.empty());
  EXPECT_TRUE(l->nics.empty());
  EXPECT_TRUE(l->gpu_nic_paths.empty());
}

TEST(HwlocLayoutSource, BadInputNamesTheFileAndStaysQuiet) {
  TempDir dir;
  std::string truncated = dir.File("truncated.xml");
  std::ofstream(truncated) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\"";
  std::string garbage = dir.File("garbage.xml");
  std::ofstream(garbage) << "this is not XML\n";
  std::string future = dir.File("v3.xml");
  std::ofstream(future) << "<?xml version=\"1.0\"?>\n<topology version=\"3.0\"></topology>\n";
  std::string empty_topology = dir.File("empty.xml");
  std::ofstream(empty_topology) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"></topology>\n";
  for (const std::string& file : {truncated, garbage, future, empty_topology, dir.File("missing.xml"), dir.path()}) {
    ::testing::internal::CaptureStderr();
    Result<HostLayout> l = HwlocLayoutSource::FromXmlFile(file).LoadLayout();
    std::string spam = ::testing::internal::GetCapturedStderr();
    ASSERT_FALSE(l.ok()) << file;
    EXPECT_EQ(l.error().code, ErrorCode::kBadInput) << file;
    EXPECT_EQ(l.error().problems[0].where, file);
    EXPECT_EQ(spam, "") << file;
  }
  Result<HostLayout> v3 = HwlocLayoutSource::FromXmlFile(future).LoadLayout();
  ASSERT_FALSE(v3.ok());
  EXPECT_NE(v3.error().problems[0].what.find("XML format 3.0"), std::string::npos) << v3.error().Message();
  Result<HostLayout> s = HwlocLayoutSource::FromXmlString("<topology", "node7:hwloc.xml").LoadLayout();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(s.error().problems[0].where, "node7:hwloc.xml");
  EXPECT_FALSE(HwlocLayoutSource::FromXmlString("", "empty").LoadLayout().ok());
}

// The contract of flux-core's rhwloc pair: this machine read live and read
// back from its own XML export give the same layout.
TEST(HwlocLayoutSource, LiveEqualsItsExportedXml) {
  Result<std::string> xml = ExportLocalHwlocXml();
  ASSERT_TRUE(xml.ok()) << xml.error().Message();
  EXPECT_NE(xml->find("<topology"), std::string::npos);
  Result<HostLayout> live = HwlocLayoutSource::Live().LoadLayout();
  ASSERT_TRUE(live.ok()) << live.error().Message();
  Result<HostLayout> exported = HwlocLayoutSource::FromXmlString(*xml, "local.xml").LoadLayout();
  ASSERT_TRUE(exported.ok()) << exported.error().Message();
  EXPECT_EQ(live->source, "hwloc-live");
  EXPECT_EQ(exported->source, "hwloc-xml:local.xml");
  ASSERT_TRUE(live->nvml.has_value());
  EXPECT_FALSE(exported->nvml.has_value());
  EXPECT_GT(live->pus, 0);
  EXPECT_FALSE(live->numa_nodes.empty());
  EXPECT_FALSE(live->hostname.empty());
  HostLayout a = *live, b = *exported;
  a.source = b.source = "";
  a.nvml = b.nvml = std::nullopt;
  // With a driver, NVML renames GPUs and adds NVLink peers and fabric info:
  // only live has that.
  if (live->nvml->status == "ok")
    for (HostLayout* l : {&a, &b})
      for (Gpu& g : l->gpus) g.model.clear(), g.nvlink_peers.clear(), g.nvlink_fabric.reset();
  EXPECT_EQ(a, b) << "live:\n" << LayoutToJson(a).dump(2) << "\nexported:\n" << LayoutToJson(b).dump(2);
}

}  // namespace
}  // namespace topolaunch
