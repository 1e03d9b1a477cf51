// The generated fabrics, checked two ways: parsed as text (counts, cabling,
// names), and loaded into a real ibsim and walked by the stock ibnetdiscover,
// which must give back the same fabric. The same ibsim round trip checks the
// dump parser against the simulator on real dumps and an ibsim-style file.
#include "support/fabric_generator.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "core/text_io.h"
#include "discover/ibnetdiscover_parser.h"
#include "support/test_paths.h"

namespace topolaunch::testing {
namespace {

// A minimal ibsim runner for these tests (to be replaced by the shared
// ibsim_harness): `ibsim -s -n FLAGS NETFILE` under a unique IBSIM_SOCKNAME,
// started when its log says "Network simulator ready", SIGKILLed by PID in
// the destructor so a failing test leaves nothing behind.
class IbsimProcess {
 public:
  IbsimProcess(const std::string& netfile, const std::vector<std::string>& flags) {
    static int serial = 0;
    socket_ = fmt::format("tl-gen-{}-{}", getpid(), ++serial);
    log_ = dir_.File("ibsim.log");
    std::vector<std::string> args{"ibsim", "-s", "-n"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(netfile);
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int in = open("/dev/null", O_RDONLY);
      dup2(in, 0), dup2(out, 1), dup2(out, 2);
      setenv("IBSIM_SOCKNAME", socket_.c_str(), 1);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp("ibsim", argv.data());
      _exit(127);
    }
  }
  ~IbsimProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  IbsimProcess(const IbsimProcess&) = delete;
  IbsimProcess& operator=(const IbsimProcess&) = delete;

  // Waits for the start-up line; false (with the log in *why) if ibsim died or hung.
  bool WaitReady(std::string* why) {
    for (int i = 0; i < 300; ++i) {
      std::string log = Log();
      if (log.find("Network simulator ready") != std::string::npos) return true;
      if (pid_ <= 0 || waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        *why = "ibsim exited: " + log;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    *why = "ibsim did not start within 15 s: " + Log();
    return false;
  }

  // `ibsim-run ibnetdiscover` against this simulator; its stdout.
  std::string Ibnetdiscover() const {
    std::string command = fmt::format("IBSIM_SOCKNAME={} timeout 120 ibsim-run ibnetdiscover 2>/dev/null", socket_);
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    std::string out;
    char buffer[65536];
    for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) out.append(buffer, n);
    return out;
  }

 private:
  std::string Log() const {
    Result<std::string> text = ReadTextFile(log_);
    return text ? *text : std::string();
  }

  TempDir dir_;
  std::string socket_, log_;
  pid_t pid_ = -1;
};

bool IbsimInstalled() {
  std::istringstream path(getenv("PATH") ? getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');)
    if (access((dir + "/ibsim").c_str(), X_OK) == 0 && access((dir + "/ibsim-run").c_str(), X_OK) == 0) return true;
  return false;
}

// Loads `netfile` into ibsim and returns what ibnetdiscover found, parsed.
Result<Fabric> RoundTripThroughIbsim(const std::string& netfile, const std::vector<std::string>& flags) {
  TempDir dir;
  std::ofstream(dir.File("fabric.net")) << netfile;
  IbsimProcess ibsim(dir.File("fabric.net"), flags);
  std::string why;
  if (!ibsim.WaitReady(&why)) return Error(ErrorCode::kUnavailable, "ibsim", why);
  return ParseIbnetdiscover(ibsim.Ibnetdiscover(), "ibnetdiscover via ibsim");
}

// Which parts of the model to compare. ibsim reports sysimgguid = node GUID
// where a dump has no sysimgguid= line, CA port GUIDs as node GUID + port
// (real ConnectX port 1 often reuses the node GUID), and one width per
// cable where a dump's two ends disagree; generated fabrics avoid all three.
struct Compare {
  bool system_guids = true;
  bool ca_port_guids = true;
  bool rates = true;
};

// The model as text, nodes by GUID.
std::string Canonical(const Fabric& fabric, Compare compare = {}) {
  std::vector<const FabricNode*> nodes;
  for (const FabricNode& n : fabric.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->guid < b->guid; });
  std::string out;
  for (const FabricNode* n : nodes) {
    out += fmt::format("{} {} {} {} \"{}\"\n", NodeTypeName(n->type), FormatGuid(n->guid),
                       compare.system_guids ? FormatGuid(n->system_guid) : "", n->num_ports, n->description);
    bool port_guids = compare.ca_port_guids || n->type == NodeType::kSwitch;
    for (const FabricPort& p : n->ports)
      out += fmt::format(" [{}] {} lid {} {} -> {}[{}]\n", p.number, port_guids ? FormatGuid(p.port_guid) : "", p.lid,
                         compare.rates ? p.width + p.speed : "", p.remote ? FormatGuid(p.remote->node_guid) : "-",
                         p.remote ? p.remote->port : 0);
  }
  return out;
}

struct GeneratorCase {
  std::string name;
  GeneratedFabric fabric;
};

std::vector<GeneratorCase> Generators() {
  FatTreeSpec shuffled;
  shuffled.leaves = 3;
  shuffled.hosts_per_leaf = 5;
  shuffled.uplinks_per_spine = 2;
  shuffled.speed = "EDR";
  shuffled.shuffled_names = true;
  FatTreeSpec medium;
  medium.leaves = 8;
  medium.hosts_per_leaf = 16;
  medium.spines = 4;
  return {{"TwoLevelDefault", TwoLevelFatTree({})},
          {"TwoLevelShuffledEdr", TwoLevelFatTree(shuffled)},
          {"TwoLevel128Hosts", TwoLevelFatTree(medium)},
          {"ThreeLevel", ThreeLevelFatTree({})},
          {"RailPod", RailOptimizedPod({})},
          {"UnmappedCas", FabricWithUnmappedCas()}};
}

class GeneratedFabrics : public ::testing::TestWithParam<GeneratorCase> {};

TEST_P(GeneratedFabrics, ParseToTheCountsAndCablingTheyPromise) {
  const GeneratedFabric& g = GetParam().fabric;
  Result<Fabric> fabric = ParseIbnetdiscover(g.netfile, GetParam().name);
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  std::set<std::string> switch_names;
  std::map<std::string, std::vector<std::string>> host_leaves;
  std::vector<std::string> unmapped;
  int cas = 0;
  for (const FabricNode& n : fabric->nodes) {
    if (n.type == NodeType::kSwitch) {
      switch_names.insert(n.description);
      continue;
    }
    ++cas;
    std::string host = n.description.substr(0, n.description.find(' '));
    if (std::find(g.hosts.begin(), g.hosts.end(), host) == g.hosts.end()) {
      unmapped.push_back(n.description);
      continue;
    }
    EXPECT_NE(n.description.find(" mlx5_"), std::string::npos) << n.description;
    for (const FabricPort& p : n.ports)
      host_leaves[host].push_back(fabric->FindNode(p.remote.value().node_guid)->description);
  }
  EXPECT_EQ(static_cast<int>(switch_names.size()), g.switches);
  EXPECT_EQ(cas, g.cas);
  std::set<std::string> level_names;
  for (const auto& [name, level] : g.switch_levels) level_names.insert(name);
  EXPECT_EQ(switch_names, level_names);
  EXPECT_EQ(host_leaves, g.host_leaves);
  EXPECT_EQ(unmapped, g.unmapped_descriptions);
  EXPECT_EQ(g.hosts.size(), g.host_leaves.size());
  for (const std::string& line : {std::string("Switch\t"), std::string("Ca\t")})
    EXPECT_NE(g.netfile.find(line), std::string::npos);
}

TEST_P(GeneratedFabrics, IbsimRediscoversTheSameFabric) {
  ASSERT_TRUE(IbsimInstalled()) << "ibsim/ibsim-run not installed (bash tests/install_deps.sh test)";
  const GeneratedFabric& g = GetParam().fabric;
  Result<Fabric> written = ParseIbnetdiscover(g.netfile, GetParam().name);
  ASSERT_TRUE(written.ok()) << written.error().Message();
  Result<Fabric> found = RoundTripThroughIbsim(g.netfile, IbsimSizeFlags(g));
  ASSERT_TRUE(found.ok()) << found.error().Message();
  int switches = 0, cas = 0;
  for (const FabricNode& n : found->nodes) (n.type == NodeType::kSwitch ? switches : cas)++;
  EXPECT_EQ(switches, g.switches);
  EXPECT_EQ(cas, g.cas);
  EXPECT_EQ(Canonical(*found), Canonical(*written));
}

INSTANTIATE_TEST_SUITE_P(All, GeneratedFabrics, ::testing::ValuesIn(Generators()),
                         [](const ::testing::TestParamInfo<GeneratorCase>& info) { return info.param.name; });

TEST(GeneratedFabricShapes, ShuffledNamesDoNotFollowCablingAndRailsKeepTheirLeaf) {
  FatTreeSpec spec;
  spec.shuffled_names = true;
  GeneratedFabric shuffled = TwoLevelFatTree(spec);
  ASSERT_EQ(shuffled.hosts.size(), 16u);
  EXPECT_NE(shuffled.hosts[0], "node01");
  std::vector<std::string> sorted = shuffled.hosts;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted.front(), "node01");
  EXPECT_EQ(sorted.back(), "node16");
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());

  GeneratedFabric rails = RailOptimizedPod({.hosts = 3, .rails = 4, .spines = 1});
  EXPECT_EQ(rails.host_leaves.at("node02"), (std::vector<std::string>{"leaf01", "leaf02", "leaf03", "leaf04"}));
  EXPECT_NE(rails.netfile.find("\"node02 mlx5_3\" lid"), std::string::npos);
  EXPECT_EQ(rails.switch_levels.at("spine01"), 2);
  EXPECT_EQ(ThreeLevelFatTree({}).switch_levels.at("core02"), 3);
}

TEST(GeneratedFabricShapes, IbsimFlagsGrowWithTheFabric) {
  EXPECT_EQ(IbsimSizeFlags(TwoLevelFatTree({})), (std::vector<std::string>{"-N", "2048", "-S", "256", "-P", "13312"}));
  GeneratedFabric big = TwoLevelFatTree({.leaves = 128, .hosts_per_leaf = 32, .spines = 32});
  EXPECT_EQ(big.switches, 160);
  EXPECT_EQ(big.cas, 4096);
  std::vector<std::string> flags = IbsimSizeFlags(big);
  EXPECT_GE(std::stoi(flags[1]), big.switches + big.cas);
  EXPECT_GE(std::stoi(flags[5]), big.ibsim_ports);
}

// The parser against the simulator on files nobody generated.
TEST(IbsimContract, RealDumpsParseAsIbsimReportsThem) {
  ASSERT_TRUE(IbsimInstalled()) << "ibsim/ibsim-run not installed (bash tests/install_deps.sh test)";
  // The man page example has cables whose two ends print different widths.
  for (auto [file, rates] : {std::pair{"doc-manpage-ibnetdiscover-2sw-4ca.ibnet", false},
                             std::pair{"nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet", true},
                             std::pair{"stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", true}}) {
    Result<std::string> text = ReadTextFile(TestDataDir() + "/ibnet/" + file);
    ASSERT_TRUE(text.ok()) << text.error().Message();
    Result<Fabric> written = ParseIbnetdiscover(*text, file);
    Result<Fabric> found = RoundTripThroughIbsim(*text, {});
    ASSERT_TRUE(written.ok() && found.ok()) << file << ": " << (written.ok() ? found : written).error().Message();
    Compare compare{.system_guids = false, .ca_port_guids = false, .rates = rates};
    EXPECT_EQ(Canonical(*found, compare), Canonical(*written, compare)) << file;
  }
}

TEST(IbsimContract, HandWrittenIbsimNetFileGetsIbsimsGuids) {
  ASSERT_TRUE(IbsimInstalled()) << "ibsim/ibsim-run not installed (bash tests/install_deps.sh test)";
  std::string net =
      "Switch\t8 \"Switch1\"\n[1]\t\"Hca1\"[1]\n[2]\t\"Hca2\"[1]\n\n"
      "Hca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n\nHca\t2 \"Hca2\"\n[1]\t\"Switch1\"[2]\n";
  Result<Fabric> written = ParseIbnetdiscover(net, "ibsim.net");
  Result<Fabric> found = RoundTripThroughIbsim(net, {});
  ASSERT_TRUE(written.ok() && found.ok()) << (written.ok() ? found : written).error().Message();
  // Without comments the file has no LIDs or speeds: compare who is cabled to whom.
  auto cabling = [](const Fabric& fabric) {
    std::map<std::string, std::string> out;
    for (const FabricNode& n : fabric.nodes)
      for (const FabricPort& p : n.ports)
        out[fmt::format("{} \"{}\" [{}] {}", FormatGuid(n.guid), n.description, p.number, FormatGuid(p.port_guid))] =
            fmt::format("{}[{}]", FormatGuid(p.remote->node_guid), p.remote->port);
    return out;
  };
  EXPECT_EQ(cabling(*found), cabling(*written));
  EXPECT_EQ(cabling(*written).size(), 4u);
  EXPECT_NE(written->FindNode(0x200000), nullptr);
}

}  // namespace
}  // namespace topolaunch::testing
