// `topolaunch discover` end to end: the real binary on real dumps, real
// hwloc XML and a real ibsim fabric; exit codes and messages per SPEC.md.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_test_util.h"
#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"

namespace topolaunch::testing {
namespace {

namespace fs = std::filesystem;

// A file of tests/data: a missing one makes the binary fail, and the test with it.
std::string Data(const std::string& relative) { return TestDataDir() + "/" + relative; }

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

struct DumpCase {
  std::string file;
  size_t switches;
  size_t hosts;
  size_t unmapped;
  std::string unmapped_reason;  // a fragment one unmapped reason must contain ("" = none expected)
};

class DiscoverRealDump : public ::testing::TestWithParam<DumpCase> {};

TEST_P(DiscoverRealDump, WritesAValidTopology) {
  const DumpCase& c = GetParam();
  ProcessResult r = RunTopolaunch({"discover", "--fabric", Data("ibnet/" + c.file)});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  Result<Topology> t = ParseOutput(r);
  ASSERT_TRUE(t.ok()) << t.error().Message();
  EXPECT_EQ(t->generated.fabric_source, "ibnetdiscover");
  EXPECT_EQ(t->switches.size(), c.switches);
  EXPECT_EQ(t->hosts.size(), c.hosts);
  EXPECT_EQ(t->unmapped.size(), c.unmapped);
  if (!c.unmapped_reason.empty()) {
    bool found = false;
    for (const UnmappedCa& u : t->unmapped) found |= u.reason.find(c.unmapped_reason) != std::string::npos;
    EXPECT_TRUE(found) << "no unmapped CA with reason containing " << c.unmapped_reason;
  }
  for (const TopologyHost& h : t->hosts) EXPECT_FALSE(h.layout.has_value()) << "a dump of another cluster got our layout";
}

// Counts read from the files themselves (Switch / Ca records, CA descriptions).
INSTANTIATE_TEST_SUITE_P(
    Dumps, DiscoverRealDump,
    ::testing::Values(DumpCase{"doc-manpage-ibnetdiscover-2sw-4ca.ibnet", 2, 0, 4, "firmware default"},
                      DumpCase{"nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet", 2, 5, 1, "SHARP"},
                      DumpCase{"psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet", 11, 0, 89, "firmware default"},
                      DumpCase{"gb200-isolated-single-ca-0sw-1ca.ibnet", 0, 1, 0, ""},
                      DumpCase{"quantum-hdr-2019-60sw-2ca-crlf.ibnet", 60, 2, 0, ""}),
    [](const auto& info) {
      std::string name = info.param.file.substr(0, info.param.file.find('-', 4));
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(DiscoverCli, StageClusterHasDualHomedHostsAndTwoLevels) {
  ProcessResult r = RunTopolaunch({"discover", "--fabric", Data("ibnet/stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  Result<Topology> t = ParseOutput(r);
  ASSERT_TRUE(t.ok()) << t.error().Message();
  EXPECT_EQ(t->switches.size(), 8u);
  int leaves = 0, max_level = 0;
  for (const TopologySwitch& s : t->switches) {
    leaves += s.level == 1;
    max_level = std::max(max_level, s.level);
  }
  EXPECT_GE(leaves, 1);
  EXPECT_EQ(max_level, 2);
  bool dual_homed = false;
  for (const TopologyHost& h : t->hosts) dual_homed |= h.hcas.size() > 1;
  EXPECT_TRUE(dual_homed);
  const TopologyHost* stage98 = t->FindHost("stage98");
  ASSERT_NE(stage98, nullptr);
  EXPECT_EQ(stage98->hcas[0].device, "mlx4_0");
  EXPECT_EQ(stage98->hcas[0].speed, "QDR");
  EXPECT_EQ(stage98->hcas[0].rate_gbps, 40.0);
}

TEST(DiscoverCli, TextAndSlurmFormats) {
  std::string dump = Data("ibnet/stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet");
  ProcessResult text = RunTopolaunch({"discover", "--fabric", dump, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_NE(text.out.find("stage"), std::string::npos);
  ProcessResult slurm = RunTopolaunch({"discover", "--fabric", dump, "--format", "slurm"});
  ASSERT_EQ(slurm.exit_code, 0) << slurm.Describe();
  EXPECT_NE(slurm.out.find("SwitchName="), std::string::npos);
  EXPECT_NE(slurm.out.find("Nodes="), std::string::npos);
  EXPECT_NE(slurm.out.find("Switches="), std::string::npos);
  // No hosts at all: refuse rather than write an empty topology.conf.
  ProcessResult empty = RunTopolaunch({"discover", "--fabric", Data("ibnet/psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet"),
                                       "--format", "slurm"});
  EXPECT_EQ(empty.exit_code, 2) << empty.Describe();
  EXPECT_TRUE(empty.out.empty());
}

// Per-rail subnets: one dump each, one topology with every host port.
TEST(DiscoverCli, SeveralFabricFilesAreOneFabric) {
  std::string stage = Data("ibnet/stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet");
  std::string lab = Data("ibnet/nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet");
  ProcessResult r = RunTopolaunch({"discover", "--fabric", stage, "--fabric", lab});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  Result<Topology> t = ParseOutput(r);
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->FindHost("stage1"), nullptr);
  EXPECT_NE(t->FindHost("r-dcs96"), nullptr);
  EXPECT_EQ(t->switches.size(), 10u);

  ProcessResult live = RunTopolaunch({"discover", "--fabric", stage, "--fabric", "live"});
  EXPECT_EQ(live.exit_code, 2) << live.Describe();
  EXPECT_NE(live.err.find("several fabrics are read from files only"), std::string::npos) << live.err;
  EXPECT_TRUE(live.out.empty());
}

TEST(DiscoverCli, SlurmNodesChoosesTheHostsOfTopologyConf) {
  std::string dump = Data("ibnet/stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet");
  ProcessResult r = RunTopolaunch({"discover", "--fabric", dump, "--format", "slurm", "--slurm-nodes",
                                   "stage[1-135],tank1,spare[1-2]"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("SwitchName=ib6 Nodes=stage[121-135]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# cabled hosts left out by --slurm-nodes: 8\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not cabled in this fabric (Slurm will place them under no switch): spare[1-2]\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(not compute hosts; --slurm-nodes chooses): tank1\n"), std::string::npos) << r.out;

  ProcessResult bad = RunTopolaunch({"discover", "--fabric", dump, "--format", "slurm", "--slurm-nodes", "stage[1-"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("--slurm-nodes: "), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty());
  ProcessResult wrong_format = RunTopolaunch({"discover", "--fabric", dump, "--slurm-nodes", "stage1"});
  EXPECT_EQ(wrong_format.exit_code, 2) << wrong_format.Describe();
  EXPECT_NE(wrong_format.err.find("--slurm-nodes: is only read with --format slurm"), std::string::npos)
      << wrong_format.err;
}

TEST(DiscoverCli, NodeNameMapNamesFirmwareDefaultCas) {
  TempDir dir;
  WriteText(dir.File("map"), "# site map\n0x0008f10403960984 \"compute7 mlx4_0\"\n0x8f10400410015 \"leaf-sw6ib4\"\n");
  ProcessResult r = RunTopolaunch({"discover", "--fabric", Data("ibnet/doc-manpage-ibnetdiscover-2sw-4ca.ibnet"),
                                   "--node-name-map", dir.File("map")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  Result<Topology> t = ParseOutput(r);
  ASSERT_TRUE(t.ok());
  ASSERT_NE(t->FindHost("compute7"), nullptr);
  EXPECT_EQ(t->unmapped.size(), 3u);
  ASSERT_NE(t->FindSwitch(0x8f10400410015), nullptr);
  EXPECT_EQ(t->FindSwitch(0x8f10400410015)->name, "leaf-sw6ib4");
}

struct BadInputCase {
  std::string name;
  std::string content;      // written to a temp file given as --fabric
  std::string message;      // fragment of stderr
};

class DiscoverBadFabricFile : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(DiscoverBadFabricFile, ExitsTwoNamingTheFile) {
  TempDir dir;
  std::string path = dir.File("fabric.ibnet");
  WriteText(path, GetParam().content);
  ProcessResult r = RunTopolaunch({"discover", "--fabric", path});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("topolaunch: error: " + path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Files, DiscoverBadFabricFile,
    ::testing::Values(
        BadInputCase{"empty", "", ""},
        BadInputCase{"garbage", "\x7f\x45\x4c\x46 binary junk \x01\x02\n\n", ""},
        BadInputCase{"truncated",
                     "vendid=0x2c9\ndevid=0xc738\nswitchguid=0x2(2)\nSwitch\t36 \"S-0000000000000002\"\t\t# \"leaf\" "
                     "enhanced port 0 lid 1 lmc 0\n[1]\t\"H-00000000000000",
                     ":5"},
        BadInputCase{"dangling_link",
                     "vendid=0x2c9\ndevid=0xc738\nswitchguid=0x2(2)\nSwitch\t36 \"S-0000000000000002\"\t\t# \"leaf\" "
                     "enhanced port 0 lid 1 lmc 0\n[1]\t\"H-0000000000000010\"[1](11) \t\t# \"node1 mlx5_0\" lid 4 4xHDR\n",
                     "0000000000000010"}),
    [](const auto& info) { return info.param.name; });

TEST(DiscoverCli, MissingFileAndPortsReport) {
  ProcessResult missing = RunTopolaunch({"discover", "--fabric", "/nonexistent/fabric.ibnet"});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  EXPECT_NE(missing.err.find("/nonexistent/fabric.ibnet"), std::string::npos);
  std::string report = Data("ibnet/plafrim-2016-voltaire-qdr-ibnetdiscover-sp-ports-report.txt");
  ProcessResult r = RunTopolaunch({"discover", "--fabric", report});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find(report), std::string::npos);
}

TEST(DiscoverCli, InvalidTopologyJsonListsEveryProblem) {
  TempDir dir;
  WriteText(dir.File("t.json"),
            R"({"schema":"topolaunch.topology/1","generated":{"by":"x","at":"y","fabric_source":"live"},)"
            R"("switches":[{"guid":"0xABC","name":"s","level":1,"ports":36}],)"
            R"("hosts":[{"name":"n 1","hcas":[]}],"links":[],"unmapped":[{"guid":"0x0000000000000001"}]})");
  ProcessResult r = RunTopolaunch({"discover", "--topology", dir.File("t.json"), "--format", "text"});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  for (const char* path : {"$.switches[0].guid", "$.hosts[0].name", "$.unmapped[0].description", "$.unmapped[0].reason"})
    EXPECT_NE(r.err.find(path), std::string::npos) << path << "\n" << r.err;
}

TEST(DiscoverCli, OutputFileIsWrittenWholeOrNotAtAll) {
  TempDir dir;
  std::string out = dir.File("topology.json");
  ProcessResult ok = RunTopolaunch({"discover", "--fabric", Data("ibnet/doc-nvidia-ibdiagpath-2sw-6ca.ibnet"), "-o", out});
  ASSERT_EQ(ok.exit_code, 0) << ok.Describe();
  EXPECT_TRUE(ok.out.empty());
  std::string first = ReadFile(out);
  ASSERT_TRUE(ParseTopologyJson(first, out).ok());
  WriteText(dir.File("bad.ibnet"), "garbage\n");
  ProcessResult bad = RunTopolaunch({"discover", "--fabric", dir.File("bad.ibnet"), "-o", out});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(ReadFile(out), first);  // the earlier file is untouched
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
}

TEST(DiscoverCli, BadUsageExitsTwo) {
  EXPECT_EQ(RunTopolaunch({"discover", "--format", "yaml"}).exit_code, 2);
  EXPECT_EQ(RunTopolaunch({"discover", "--port", "-1"}).exit_code, 2);
  for (const char* smps : {"0", "65", "many"}) {
    ProcessResult r = RunTopolaunch({"discover", "--max-smps", smps});
    EXPECT_EQ(r.exit_code, 2) << smps;
    EXPECT_NE(r.err.find("--max-smps"), std::string::npos) << r.err;
  }
  EXPECT_EQ(RunTopolaunch({"audit", "--max-smps", "0"}).exit_code, 2);
  EXPECT_EQ(RunTopolaunch({"frobnicate"}).exit_code, 2);
  ProcessResult help = RunTopolaunch({"discover", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
}

TEST(DiscoverCli, HwlocXmlAndLayoutDir) {
  ProcessResult one = RunTopolaunch({"discover", "--fabric", "none", "--hwloc-xml",
                                     Data("hwloc/jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml")});
  ASSERT_EQ(one.exit_code, 0) << one.Describe();
  Result<Topology> t = ParseOutput(one);
  ASSERT_TRUE(t.ok()) << t.error().Message();
  ASSERT_EQ(t->hosts.size(), 1u);
  EXPECT_EQ(t->hosts[0].name, "jwb0004");  // the XML's own HostName
  ASSERT_TRUE(t->hosts[0].layout.has_value());
  EXPECT_EQ(t->hosts[0].layout->gpus.size(), 4u);
  EXPECT_EQ(t->generated.fabric_source, "none");

  // Layouts named after fabric hosts attach to them (symlinks: never copies of the data).
  TempDir dir;
  fs::create_directory(dir.File("layouts"));
  fs::create_symlink(Data("hwloc/llnl-lassen-power9-4xV100-4xCX5.xml"), dir.File("layouts/r-dmz-ufm134.xml"));
  fs::create_symlink(Data("hwloc/quanta-gh200-1socket-no-io.xml"), dir.File("layouts/r-dcs96.xml"));
  ProcessResult several = RunTopolaunch({"discover", "--fabric", Data("ibnet/nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet"),
                                         "--layout-dir", dir.File("layouts")});
  ASSERT_EQ(several.exit_code, 0) << several.Describe();
  t = ParseOutput(several);
  ASSERT_TRUE(t.ok());
  ASSERT_NE(t->FindHost("r-dmz-ufm134"), nullptr);
  ASSERT_TRUE(t->FindHost("r-dmz-ufm134")->layout.has_value());
  EXPECT_EQ(t->FindHost("r-dmz-ufm134")->layout->gpus.size(), 4u);
  EXPECT_FALSE(t->FindHost("r-dmz-ufm134")->hcas.empty());
  ASSERT_TRUE(t->FindHost("r-dcs96")->layout.has_value());
  EXPECT_TRUE(t->FindHost("r-dcs96")->layout->gpus.empty());

  WriteText(dir.File("broken.xml"), "<topology><object type=\"Machine\"");
  ProcessResult bad = RunTopolaunch({"discover", "--fabric", "none", "--hwloc-xml", dir.File("broken.xml")});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find(dir.File("broken.xml")), std::string::npos) << bad.err;
}

TEST(DiscoverCli, WithoutAnHcaAutoWritesTheLocalLayoutAndLiveExitsThree) {
  // This machine has no HCA (and no ibsim preload): --fabric live must fail
  // cleanly with exit 3, --fabric auto must fall back to the layout alone.
  ProcessResult live = RunTopolaunch({"discover", "--fabric", "live", "--timeout", "10"});
  if (live.exit_code == 0) GTEST_SKIP() << "this machine has a real InfiniBand HCA: the test needs a machine without one";
  EXPECT_EQ(live.exit_code, 3) << live.Describe();
  EXPECT_NE(live.err.find("topolaunch: error:"), std::string::npos);
  ProcessResult automatic = RunTopolaunch({"discover"});
  ASSERT_EQ(automatic.exit_code, 0) << automatic.Describe();
  EXPECT_NE(automatic.err.find("no InfiniBand fabric"), std::string::npos);
  Result<Topology> t = ParseOutput(automatic);
  ASSERT_TRUE(t.ok()) << t.error().Message();
  EXPECT_EQ(t->generated.fabric_source, "none");
  ASSERT_EQ(t->hosts.size(), 1u);
  ASSERT_TRUE(t->hosts[0].layout.has_value());
  EXPECT_FALSE(t->hosts[0].layout->numa_nodes.empty());
  ASSERT_TRUE(t->hosts[0].layout->nvml.has_value());
}

TEST(DiscoverCli, ALayoutThatNeverLoadsEndsAtTheTimeout) {
  // A sick node: a sysfs file whose read never returns (a GPU fallen off
  // the bus does this to its driver's files). hwloc reads the root that
  // HWLOC_FSROOT names, where FIFOs without a writer block it for good.
  TempDir root;
  fs::create_directories(root.File("sys/devices/system/cpu/cpu0/topology"));
  fs::create_directories(root.File("proc"));
  for (const char* file : {"sys/devices/system/cpu/online", "sys/devices/system/cpu/possible",
                           "sys/devices/system/cpu/cpu0/topology/core_cpus", "proc/cpuinfo"})
    ASSERT_EQ(mkfifo(root.File(file).c_str(), 0600), 0) << file;
  TempDir out;
  for (const char* fabric : {"none", "auto"}) {
    ProcessResult r = RunTopolaunch({"discover", "--fabric", fabric, "--timeout", "1", "-o", out.File("t.json")},
                                    {{"HWLOC_FSROOT", root.path()}});
    EXPECT_FALSE(r.timed_out) << fabric;
    EXPECT_EQ(r.exit_code, 3) << fabric << ": " << r.Describe();
    EXPECT_LT(r.seconds, 10) << fabric;
    EXPECT_NE(r.err.find("this machine's layout did not load within 1 s"), std::string::npos) << fabric << ": " << r.err;
    EXPECT_FALSE(fs::exists(out.File("t.json"))) << fabric;
  }
  // --no-layout never asks.
  ProcessResult none = RunTopolaunch({"discover", "--fabric", "none", "--no-layout", "--timeout", "1"},
                                     {{"HWLOC_FSROOT", root.path()}});
  EXPECT_EQ(none.exit_code, 0) << none.Describe();
}

// --- live, under ibsim ------------------------------------------------------

// The same fabric read three ways must give the same topology: live through
// libibnetdisc, the ibnetdiscover dump of it, and its libibnetdisc cache.
void ExpectSameTopology(Topology a, Topology b, bool compare_state) {
  a.generated = b.generated = {};
  if (!compare_state) {
    for (TopologyLink& l : a.links) l.state.clear();
    for (TopologyLink& l : b.links) l.state.clear();
  }
  EXPECT_EQ(a.switches, b.switches);
  EXPECT_EQ(a.hosts, b.hosts);
  EXPECT_EQ(a.links, b.links);
  EXPECT_EQ(a.unmapped, b.unmapped);
}

void CheckLiveMatchesFiles(const GeneratedFabric& fabric) {
  TempDir dir;
  WriteText(dir.File("net"), fabric.netfile);
  IbsimOptions options;
  Result<std::unique_ptr<IbsimFabric>> sim = IbsimFabric::Start(dir.File("net"), options);
  ASSERT_TRUE(sim.ok()) << sim.error().Message();
  IbsimFabric& ib = **sim;
  ProcessResult live = ib.Run({TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout"});
  ASSERT_EQ(live.exit_code, 0) << live.Describe();
  ProcessResult dump = ib.Run({"ibnetdiscover"});
  ASSERT_EQ(dump.exit_code, 0) << dump.Describe();
  WriteText(dir.File("dump.ibnet"), dump.out);
  ProcessResult cache = ib.Run({"ibnetdiscover", "--cache", dir.File("fabric.cache")});
  ASSERT_EQ(cache.exit_code, 0) << cache.Describe();

  ProcessResult from_dump = RunTopolaunch({"discover", "--fabric", dir.File("dump.ibnet")});
  ProcessResult from_cache = RunTopolaunch({"discover", "--fabric", dir.File("fabric.cache")});
  ASSERT_EQ(from_dump.exit_code, 0) << from_dump.Describe();
  ASSERT_EQ(from_cache.exit_code, 0) << from_cache.Describe();
  Result<Topology> l = ParseOutput(live), d = ParseOutput(from_dump), c = ParseOutput(from_cache);
  ASSERT_TRUE(l.ok() && d.ok() && c.ok());
  EXPECT_EQ(l->generated.fabric_source, "live");
  EXPECT_EQ(d->generated.fabric_source, "ibnetdiscover");
  EXPECT_EQ(c->generated.fabric_source, "cache");
  ExpectSameTopology(*l, *d, /*compare_state=*/false);
  ExpectSameTopology(*l, *c, /*compare_state=*/true);
  // However many SMPs are in flight, the walk finds the same fabric.
  for (const char* smps : {"1", "32"}) {
    ProcessResult other = ib.Run({TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "--max-smps", smps});
    ASSERT_EQ(other.exit_code, 0) << other.Describe();
    Result<Topology> o = ParseOutput(other);
    ASSERT_TRUE(o.ok());
    ExpectSameTopology(*l, *o, /*compare_state=*/true);
  }

  // And against the generator's own expectations.
  EXPECT_EQ(static_cast<int>(l->switches.size()), fabric.switches);
  EXPECT_EQ(l->hosts.size(), fabric.hosts.size());
  EXPECT_EQ(l->unmapped.size(), fabric.unmapped_descriptions.size());
  for (const TopologySwitch& s : l->switches) {
    auto expected = fabric.switch_levels.find(s.name);
    ASSERT_NE(expected, fabric.switch_levels.end()) << s.name;
    EXPECT_EQ(s.level, expected->second) << s.name;
  }
  for (const TopologyHost& h : l->hosts) {
    auto expected = fabric.host_leaves.find(h.name);
    ASSERT_NE(expected, fabric.host_leaves.end()) << h.name;
    std::vector<std::string> leaves;
    for (const HcaAttachment& a : h.hcas) leaves.push_back(l->FindSwitch(a.switch_guid.value_or(0))->name);
    EXPECT_EQ(leaves, expected->second) << h.name;
  }
}

TEST(DiscoverLive, TwoLevelFatTreeMatchesDumpAndCache) { CheckLiveMatchesFiles(TwoLevelFatTree({})); }

TEST(DiscoverLive, ThreeLevelFatTreeMatchesDumpAndCache) { CheckLiveMatchesFiles(ThreeLevelFatTree({})); }

TEST(DiscoverLive, RailOptimizedPodMatchesDumpAndCache) { CheckLiveMatchesFiles(RailOptimizedPod({})); }

TEST(DiscoverLive, OversubscribedTreeMatchesDumpAndCache) {
  FatTreeSpec spec;
  spec.leaves = 3;
  spec.hosts_per_leaf = 12;
  spec.spines = 1;
  spec.uplinks_per_spine = 2;
  CheckLiveMatchesFiles(TwoLevelFatTree(spec));
}

TEST(DiscoverLive, UnmappedCasMatchDumpAndCache) { CheckLiveMatchesFiles(FabricWithUnmappedCas()); }

TEST(DiscoverLive, IbsimNotRunningExitsThreeQuickly) {
  // Under ibsim-run but with no simulator behind the socket.
  ProcessSpec spec;
  spec.argv = {"ibsim-run", TopolaunchBinary(), "discover", "--fabric", "live", "--timeout", "20"};
  spec.env = {{"IBSIM_SOCKNAME", UniqueSocketName()}};
  spec.timeout = std::chrono::seconds(60);
  TempDir dir;
  spec.cwd = dir.path();
  ProcessResult r = RunProcess(spec);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: error:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace topolaunch::testing
