// The libibnetdisc sources against the real thing: ibsim simulating each
// real-world fabric dump in tests/data/ibnet, walked by our live source (in
// live_fabric_probe, started under ibsim-run) and by ibnetdiscover through
// the same ibsim; and libibnetdisc caches that ibnetdiscover wrote.
#include "discover/ibnetdisc_fabric_source.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "discover/live_fabric_readers.h"
#include "support/ibsim_harness.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace topolaunch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The ibnetdiscover dumps ibsim can load (the plafrim file is a ports report,
// not a topology). Empty only when tests/data/ibnet is missing, which
// DumpsArePresent reports as a failure (this runs before main: no throwing).
std::vector<std::string> DumpNames() {
  std::vector<std::string> names;
  std::string dir = TestDataDir() + "/ibnet";
  if (!fs::is_directory(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".ibnet") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string DumpPath(const std::string& name) { return TestDataDir() + "/ibnet/" + name; }

// The dump ibsim takes longest to walk: the biggest file.
std::optional<std::string> LargestDump() {
  std::vector<std::string> names = DumpNames();
  if (names.empty()) return std::nullopt;
  return *std::max_element(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return fs::file_size(DumpPath(a)) < fs::file_size(DumpPath(b));
  });
}

std::unique_ptr<IbsimFabric> StartIbsim(const std::string& netfile) {
  Result<std::unique_ptr<IbsimFabric>> sim = IbsimFabric::Start(netfile);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().Message());
  return sim.ok() ? std::move(sim).value() : nullptr;
}

ProcessResult RunProbe(const IbsimFabric& sim, std::vector<std::string> args, milliseconds limit = seconds(120)) {
  args.insert(args.begin(), LIVE_FABRIC_PROBE);
  return sim.Run(args, limit);
}

std::string ReadHead(const std::string& path, size_t n) { return ReadFile(path).substr(0, n); }

class LiveFabricOnDump : public ::testing::TestWithParam<std::string> {};

TEST_P(LiveFabricOnDump, AgreesWithIbnetdiscoverThroughTheSameIbsim) {
  std::unique_ptr<IbsimFabric> sim = StartIbsim(DumpPath(GetParam()));
  ASSERT_TRUE(sim);
  ProcessResult reference = sim->Run({"ibnetdiscover"});
  ASSERT_EQ(reference.exit_code, 0) << reference.Describe();
  OracleFabric oracle = ReadIbnetdiscoverOutput(reference.out);
  ASSERT_TRUE(oracle.bad_lines.empty()) << FirstLines(oracle.bad_lines);
  ASSERT_FALSE(oracle.nodes.empty());

  ProcessResult probe = RunProbe(*sim, {"live"});
  ASSERT_EQ(probe.exit_code, 0) << probe.Describe();
  ProbeOutput live = ReadProbeOutput(probe.out);
  ASSERT_TRUE(live.fabric) << live.error_code << ": " << probe.err;
  ASSERT_TRUE(live.bad_lines.empty()) << FirstLines(live.bad_lines);
  EXPECT_EQ(live.fabric->source, "live");
  std::vector<std::string> diffs = CompareWithOracle(*live.fabric, oracle);
  EXPECT_TRUE(diffs.empty()) << FirstLines(diffs);
  EXPECT_NE(probe.err.find(fmt::format("progress {}\n", oracle.nodes.size())), std::string::npos) << probe.err;

  // No subnet manager runs: every cabled port is up but not yet Active.
  for (const FabricNode& node : live.fabric->nodes)
    for (const FabricPort& port : node.ports)
      if (port.remote) {
        EXPECT_EQ(port.state, "Init") << FormatGuid(node.guid) << "[" << port.number << "]";
      }
  std::cout << "[ timing   ] " << GetParam() << ": " << oracle.nodes.size() << " nodes; ibnetdiscover "
            << reference.seconds << " s, live probe " << probe.seconds << " s (" << probe.err.substr(probe.err.find("walk_ms"))
            << ")\n";
}

TEST_P(LiveFabricOnDump, CacheWrittenByIbnetdiscoverLoadsLikeTheLiveWalk) {
  std::unique_ptr<IbsimFabric> sim = StartIbsim(DumpPath(GetParam()));
  ASSERT_TRUE(sim);
  std::string cache = sim->work_dir() + "/fabric.cache";
  ProcessResult written = sim->Run({"ibnetdiscover", "--cache", cache});
  ASSERT_EQ(written.exit_code, 0) << written.Describe();
  ProcessResult probe = RunProbe(*sim, {"live"});
  ProbeOutput live = ReadProbeOutput(probe.out);
  ASSERT_TRUE(live.fabric) << probe.Describe();

  EXPECT_TRUE(HasIbnetdiscCacheMagic(ReadHead(cache, 64)));
  EXPECT_FALSE(HasIbnetdiscCacheMagic(ReadHead(DumpPath(GetParam()), 64)));
  Result<Fabric> loaded = IbnetdiscCacheFabricSource(cache).LoadFabric();
  ASSERT_TRUE(loaded.ok()) << loaded.error().Message();
  EXPECT_EQ(loaded->source, "cache");
  // Every field, port states included; the cache has no Mellanox extended
  // PortInfo, so FDR10 links read back as QDR (ibnetdiscover --load-cache
  // prints 4xQDR for them too).
  std::vector<std::string> diffs = CompareFabrics(*live.fabric, *loaded, /*fdr10_reads_as_qdr=*/true);
  EXPECT_TRUE(diffs.empty()) << FirstLines(diffs);
}

INSTANTIATE_TEST_SUITE_P(TestData, LiveFabricOnDump, ::testing::ValuesIn(DumpNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LiveFabricOnDump);

TEST(LiveFabricOnDump, DumpsArePresent) {
  EXPECT_GE(DumpNames().size(), 5u) << "tests/data/ibnet is missing dumps: the per-dump ibsim tests did not run";
}

TEST(IbnetdiscCacheFabricSource, RejectsWhatIsNotACacheAsBadInputNamingTheFile) {
  TempDir dir;
  std::string real_head;  // the first bytes of a real cache that ibsim wrote
  {  // ibsim stops at the end of this block
    std::unique_ptr<IbsimFabric> sim = StartIbsim(DumpPath("doc-manpage-ibnetdiscover-2sw-4ca.ibnet"));
    ASSERT_TRUE(sim);
    ProcessResult written = sim->Run({"ibnetdiscover", "--cache", dir.File("real.cache")});
    ASSERT_EQ(written.exit_code, 0) << written.Describe();
    real_head = ReadHead(dir.File("real.cache"), 100);
  }
  struct Case {
    std::string name, content;
  };
  std::vector<Case> cases = {
      {"garbage", std::string("\x13\x37not a cache at all\xff\x00\x01", 22)},
      {"empty", ""},
      {"text-dump", "#\n# Topology file: generated on Tue Jun  5 14:15:10 2007\n#\n"},
      {"magic-only", std::string("\x2b\x83\xe7\x8f", 4)},
      {"wrong-version", std::string("\x2b\x83\xe7\x8f\x02\x00\x00\x00", 8) + std::string(40, '\0')},
  };
  ASSERT_FALSE(real_head.empty()) << "ibnetdiscover --cache wrote nothing";
  cases.push_back({"truncated-real-cache", real_head});
  for (const Case& c : cases) {
    std::string path = dir.File(c.name);
    std::ofstream(path, std::ios::binary) << c.content;
    Result<Fabric> loaded = IbnetdiscCacheFabricSource(path).LoadFabric();
    ASSERT_FALSE(loaded.ok()) << c.name;
    EXPECT_EQ(loaded.error().code, ErrorCode::kBadInput) << c.name;
    EXPECT_NE(loaded.error().Message().find(path), std::string::npos) << loaded.error().Message();
  }
  Result<Fabric> missing = IbnetdiscCacheFabricSource(dir.File("absent")).LoadFabric();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kBadInput);
}

TEST(HasIbnetdiscCacheMagic, RecognisesTheLittleEndianMagicOnly) {
  struct Case {
    std::string head;
    bool cache;
  };
  const Case cases[] = {
      {std::string("\x2b\x83\xe7\x8f\x01\x00\x00\x00", 8), true},
      {std::string("\x2b\x83\xe7\x8f", 4), true},
      {std::string("\x8f\xe7\x83\x2b\x01\x00\x00\x00", 8), false},  // big-endian: not what libibnetdisc writes
      {std::string("\x2b\x83\xe7", 3), false},
      {"", false},
      {"#\n# Topology file: generated", false},
      {"\xef\xbb\xbfvendid=0x2c9", false},
  };
  for (const Case& c : cases) EXPECT_EQ(HasIbnetdiscCacheMagic(c.head), c.cache) << ::testing::PrintToString(c.head);
}

TEST(IbnetdiscFabricSource, UnderIbsimRunWithNoIbsimIsUnavailableAtOnce) {
  TempDir dir;
  ProcessSpec spec;
  spec.argv = {"ibsim-run", LIVE_FABRIC_PROBE, "live", "60000"};
  spec.env = {{"IBSIM_SOCKNAME", UniqueSocketName() + "-nobody"}};
  spec.cwd = dir.path();
  spec.timeout = seconds(30);
  ProcessResult probe = RunProcess(spec);
  ASSERT_FALSE(probe.timed_out) << probe.Describe();
  EXPECT_EQ(probe.exit_code, 3) << probe.Describe();
  EXPECT_EQ(ReadProbeOutput(probe.out).error_code, "kUnavailable") << probe.out;
  EXPECT_NE(probe.err.find("no ibsim listens"), std::string::npos) << probe.err;
  EXPECT_LT(probe.seconds, 10);  // umad2sim alone would retry forever
}

TEST(IbnetdiscFabricSource, WithoutAnHcaIsUnavailableNamingThePortAskedFor) {
  std::error_code ec;
  if (fs::exists("/sys/class/infiniband", ec) && !fs::is_empty("/sys/class/infiniband", ec))
    GTEST_SKIP() << "this machine has an InfiniBand HCA: the test needs a machine without one";
  LiveFabricOptions options;
  options.ca = "mlx5_7";
  options.port = 2;
  options.timeout = seconds(30);
  auto start = std::chrono::steady_clock::now();
  Result<Fabric> fabric = IbnetdiscFabricSource(options).LoadFabric();
  ASSERT_FALSE(fabric.ok());
  EXPECT_EQ(fabric.error().code, ErrorCode::kUnavailable) << fabric.error().Message();
  EXPECT_NE(fabric.error().Message().find("no InfiniBand HCA found"), std::string::npos) << fabric.error().Message();
  EXPECT_NE(fabric.error().Message().find("mlx5_7 port 2"), std::string::npos) << fabric.error().Message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

// ibsim itself panics ("sim_ctl_new_client: can't connect to in socket")
// when a client exits between asking to connect and ibsim answering, which
// a walk abandoned after 1 ms can do on a loaded machine. That is ibsim's
// race, not a wedge: such an attempt is run again on a fresh ibsim.
bool IbsimLostAVanishedClient(const IbsimFabric& sim) {
  return sim.Log().find("sim_ctl_new_client: can't connect") != std::string::npos;
}

TEST(IbnetdiscFabricSource, TinyTimeoutOnTheLargestDumpEndsPromptly) {
  std::optional<std::string> largest = LargestDump();
  ASSERT_TRUE(largest) << "no .ibnet dump in tests/data/ibnet";
  for (int attempt = 1;; ++attempt) {
    std::unique_ptr<IbsimFabric> sim = StartIbsim(DumpPath(*largest));
    ASSERT_TRUE(sim);
    std::vector<std::string> failures;
    for (const char* timeout_ms : {"1", "3", "10"}) {
      ProcessResult probe = RunProbe(*sim, {"live", timeout_ms}, seconds(60));
      ASSERT_FALSE(probe.timed_out) << "timeout " << timeout_ms << " ms: " << probe.Describe();
      ProbeOutput out = ReadProbeOutput(probe.out);
      if (out.fabric) continue;  // a fast machine may finish in time: fine
      std::string context = fmt::format("timeout {} ms: {}; stdout: {}", timeout_ms, probe.Describe(), probe.out);
      if (out.error_code != "kTimeout") failures.push_back("error code " + out.error_code + ", not kTimeout; " + context);
      if (probe.exit_code != 3) failures.push_back("exit status not 3; " + context);
      if (probe.seconds >= 10) failures.push_back("not prompt; " + context);
    }
    // ibsim is still usable afterwards: the abandoned walks did not wedge it.
    ProcessResult after = RunProbe(*sim, {"live"});
    if (!ReadProbeOutput(after.out).fabric)
      failures.push_back("ibsim unusable afterwards: " + after.Describe() + "; ibsim: " + Tail(sim->Log()));
    if (failures.empty()) return;
    if (attempt < 3 && IbsimLostAVanishedClient(*sim)) continue;
    for (const std::string& failure : failures) ADD_FAILURE() << failure;
    return;
  }
}

// The walk holds the calling thread; the watchdog beside it still says it is
// alive every second and ends the process at the deadline. ibsim is stopped
// (SIGSTOP), so the walk waits forever on its first answer.
TEST(IbnetdiscFabricSource, AWalkThatNeverAnswersSaysItIsAliveThenEndsAtTheDeadline) {
  std::optional<std::string> largest = LargestDump();
  ASSERT_TRUE(largest) << "no .ibnet dump in tests/data/ibnet";
  std::unique_ptr<IbsimFabric> sim = StartIbsim(DumpPath(*largest));
  ASSERT_TRUE(sim);
  ASSERT_EQ(kill(sim->pid(), SIGSTOP), 0);
  ProcessResult probe = RunProbe(*sim, {"live", "2500"}, seconds(30));
  kill(sim->pid(), SIGCONT);  // so it can be stopped as usual
  ASSERT_FALSE(probe.timed_out) << probe.Describe();
  EXPECT_EQ(probe.exit_code, 3) << probe.Describe();
  EXPECT_EQ(ReadProbeOutput(probe.out).error_code, "kTimeout") << probe.out;
  EXPECT_NE(probe.err.find("did not finish within 2500 ms"), std::string::npos) << probe.err;
  EXPECT_NE(probe.err.find("still_walking 1000\n"), std::string::npos) << probe.err;
  EXPECT_NE(probe.err.find("still_walking 2000\n"), std::string::npos) << probe.err;
  EXPECT_EQ(probe.err.find("still_walking 3000"), std::string::npos) << probe.err;
  EXPECT_GE(probe.seconds, 2.5);
  EXPECT_LT(probe.seconds, 8);
}

}  // namespace
}  // namespace topolaunch::testing
