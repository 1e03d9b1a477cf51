// `topolaunch audit` end to end against real parts: ibsim fabrics with
// OpenSM and injected faults (a 1X link and an EDR link written into the net
// file, a cable unlinked on ibsim's console, a counter raised with
// PerformanceSet), the shared real dumps, a fake sysfs tree for --local, a
// synthetic hwloc XML with a degraded GPU link, and ibsim killed mid-run.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli/audit_test_util.h"
#include "cli/cli_test_util.h"
#include "discover/ibnetdiscover_parser.h"
#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::testing {
namespace {

using nlohmann::json;

// A small two-level tree: 4 leaves x 4 hosts, 2 spines, HDR.
GeneratedFabric SmallTree() {
  FatTreeSpec spec;
  spec.leaves = 4;
  spec.hosts_per_leaf = 4;
  spec.spines = 2;
  return TwoLevelFatTree(spec);
}

struct Running {
  std::unique_ptr<IbsimFabric> ibsim;
  std::unique_ptr<OpenSm> opensm;
};

Running StartWithSm(const std::string& netfile_text, const TempDir& dir) {
  std::string path = dir.File("fabric.net");
  std::ofstream(path) << netfile_text;
  Running r;
  auto ibsim = IbsimFabric::Start(path);
  EXPECT_TRUE(ibsim.ok()) << ibsim.error().Message();
  if (!ibsim.ok()) return r;
  r.ibsim = std::move(ibsim).value();
  auto sm = OpenSm::Start(*r.ibsim);
  EXPECT_TRUE(sm.ok()) << sm.error().Message();
  if (sm.ok()) r.opensm = std::move(sm).value();
  return r;
}

// A pod with hosts of several kinds, as a topology.json: twelve four-rail
// nodes renamed into GPU nodes, storage servers with two rails, a UFM server
// with one and a node still described as "localhost"; `sick` unplugs one
// rail of gpu03.
std::string MixedKindsTopology(const TempDir& dir, bool sick) {
  RailSpec spec;
  spec.hosts = 12;
  spec.rails = 4;
  spec.host_prefix = "gpu";
  Result<Fabric> fabric = ParseIbnetdiscover(RailOptimizedPod(spec).netfile, "pod");
  EXPECT_TRUE(fabric.ok());
  if (!fabric.ok()) return "";
  std::set<Guid> unplugged;
  for (FabricNode& n : fabric->nodes) {
    if (n.type != NodeType::kCa) continue;
    int host = std::stoi(n.description.substr(3, 2)), rail = n.description.back() - '0';
    std::string device = n.description.substr(n.description.find(' '));
    if (host >= 8 && host <= 11) n.description = "stor0" + std::to_string(host - 7) + device;
    if (host == 12) n.description = "ufm" + device;
    if (host == 7) n.description = "localhost" + device;
    if ((host >= 8 && host <= 11 && rail >= 2) || (host == 12 && rail >= 1) || (sick && host == 3 && rail == 3))
      unplugged.insert(n.guid);
  }
  std::erase_if(fabric->nodes, [&](const FabricNode& n) { return unplugged.contains(n.guid); });
  for (FabricNode& n : fabric->nodes)
    std::erase_if(n.ports, [&](const FabricPort& p) { return p.remote && unplugged.contains(p.remote->node_guid); });
  std::string path = dir.File(sick ? "sick.json" : "healed.json");
  std::ofstream(path) << FormatTopologyJson(BuildTopology(*fabric, {}, {}));
  return path;
}

TEST(AuditKinds, OnlyTheGpuNodeMissingARailFailsThePod) {
  TempDir dir;
  ProcessResult sick = RunTopolaunch({"audit", "--topology", MixedKindsTopology(dir, true), "--json"});
  ASSERT_EQ(sick.exit_code, 1) << sick.Describe();
  json doc = json::parse(sick.out);
  std::set<FindingKey> errors;
  for (const FindingKey& k : SeriousFindings(doc))
    if (std::get<0>(k) == "error") errors.insert(k);
  EXPECT_EQ(errors, (std::set<FindingKey>{{"error", "host_rail_count", "gpu03", ""}})) << sick.out;

  ProcessResult text = RunTopolaunch({"audit", "--topology", MixedKindsTopology(dir, true)});
  EXPECT_NE(text.out.find("[default_node_description] 4 alike"), std::string::npos) << text.out;

  ProcessResult healed = RunTopolaunch({"audit", "--topology", MixedKindsTopology(dir, false)});
  EXPECT_EQ(healed.exit_code, 0) << healed.Describe();
  EXPECT_NE(healed.out.find("0 critical, 0 error"), std::string::npos) << healed.out;
}

TEST(AuditIbsim, ReportsExactlyTheInjectedFaults) {
  TempDir dir;
  GeneratedFabric healthy = SmallTree();
  std::string baseline = dir.File("baseline.json");
  ProcessResult disc = RunTopolaunch({"discover", "--fabric", WriteNet(dir, "healthy.net", healthy.netfile), "-o", baseline});
  ASSERT_EQ(disc.exit_code, 0) << disc.Describe();

  std::string net = SetHostLinkToken(healthy.netfile, "node03 mlx5_0", "1xHDR");
  net = SetHostLinkToken(net, "node10 mlx5_0", "4xEDR");
  Running fabric = StartWithSm(net, dir);
  ASSERT_TRUE(fabric.opensm);
  std::string node06 = NodeId(net, "node06 mlx5_0"), leaf02 = NodeId(net, "leaf02");
  ASSERT_TRUE(fabric.ibsim->Console("PerformanceSet \"" + node06 + "\"[1] PortCounters.SymbolErrorCounter=500").ok());
  // leaf02's first uplink (ports 1-4 are hosts) to spine01.
  // ibsim keeps printing (traps to the SM) after this reply, so its prompt
  // does not end the log: the audit below is what shows the cable is gone.
  (void)fabric.ibsim->Console("Unlink \"" + leaf02 + "\"[5]", std::chrono::seconds(2));

  // The unlink makes OpenSM sweep again and reroute; until it has, LID-routed
  // counter queries to leaf02's side go unanswered and the audit rightly says
  // it could not check (exit 3). Give the SM a few seconds to converge.
  ProcessResult r;
  for (int attempt = 0; attempt < 10; ++attempt) {
    r = fabric.ibsim->Run({TopolaunchBinary(), "audit", "--fabric", "live", "--expected", baseline, "--json"},
                          std::chrono::seconds(60));
    if (r.exit_code != 3 || r.out.find("did not answer the performance query") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(r.exit_code, 1) << r.Describe() << r.out;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["schema"], "topolaunch.audit/1");
  EXPECT_TRUE(doc["checks_failed_to_run"].empty()) << doc["checks_failed_to_run"].dump();
  std::set<FindingKey> expected = {
      {"error", "link_width", "node03", "leaf01"},
      {"error", "link_speed", "node10", "leaf03"},
      {"error", "port_counter", "node06", "leaf02"},
      {"error", "link_down", "", "leaf02"},
  };
  EXPECT_EQ(SeriousFindings(doc), expected) << r.out;
  for (const json& f : doc["findings"])
    if (f["check"] == "link_down") {
      EXPECT_EQ(f["port"], 5) << f.dump();
    }

  ProcessResult prolog = fabric.ibsim->Run({TopolaunchBinary(), "audit", "--fabric", "live", "--prolog"});
  EXPECT_EQ(prolog.exit_code, 1) << prolog.Describe();
  EXPECT_EQ(std::count(prolog.out.begin(), prolog.out.end(), '\n'), 1) << prolog.out;
  EXPECT_NE(prolog.out.find("link_width"), std::string::npos) << prolog.out;
  EXPECT_EQ(prolog.out.find('"'), std::string::npos) << prolog.out;
}

TEST(AuditIbsim, HealthyFabricExitsZeroWithCountersRead) {
  TempDir dir;
  Running fabric = StartWithSm(SmallTree().netfile, dir);
  ASSERT_TRUE(fabric.opensm);
  ProcessResult r = fabric.ibsim->Run({TopolaunchBinary(), "audit", "--fabric", "live", "--json", "--interval", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << r.out;
  json doc = json::parse(r.out);
  EXPECT_TRUE(SeriousFindings(doc).empty()) << r.out;
  std::vector<std::string> run = doc["checks_run"];
  EXPECT_NE(std::find(run.begin(), run.end(), "port_counter"), run.end());
}

TEST(AuditIbsim, ResetCountersClearsWhatItRead) {
  TempDir dir;
  GeneratedFabric tree = SmallTree();
  Running fabric = StartWithSm(tree.netfile, dir);
  ASSERT_TRUE(fabric.opensm);
  std::string node06 = NodeId(tree.netfile, "node06 mlx5_0");
  ASSERT_TRUE(fabric.ibsim->Console("PerformanceSet \"" + node06 + "\"[1] PortCounters.SymbolErrorCounter=500").ok());
  std::vector<std::string> audit = {TopolaunchBinary(), "audit", "--fabric", "live", "--json"};
  // Without --reset-counters the finding stays; with it, the counters read
  // are cleared, so the next audit finds the fabric healthy.
  ProcessResult first = fabric.ibsim->Run(audit);
  ASSERT_EQ(first.exit_code, 1) << first.Describe() << first.out;
  ProcessResult again = fabric.ibsim->Run(audit);
  ASSERT_EQ(again.exit_code, 1) << again.Describe() << again.out;
  std::vector<std::string> with_reset = audit;
  with_reset.push_back("--reset-counters");
  ProcessResult reset = fabric.ibsim->Run(with_reset);
  ASSERT_EQ(reset.exit_code, 1) << reset.Describe() << reset.out;
  EXPECT_EQ(SeriousFindings(json::parse(reset.out)), (std::set<FindingKey>{{"error", "port_counter", "node06", "leaf02"}}));
  ProcessResult after = fabric.ibsim->Run(audit);
  EXPECT_EQ(after.exit_code, 0) << after.Describe() << after.out;
}

TEST(AuditIbsim, WithoutSubnetManagerCountersCannotBeCheckedAndPortsAreInit) {
  TempDir dir;
  std::string path = WriteNet(dir, "fabric.net", SmallTree().netfile);
  auto ibsim = IbsimFabric::Start(path);
  ASSERT_TRUE(ibsim.ok()) << ibsim.error().Message();
  ProcessResult r = (*ibsim)->Run({TopolaunchBinary(), "audit", "--fabric", "live", "--json"});
  ASSERT_EQ(r.exit_code, 3) << r.Describe() << r.out;
  json doc = json::parse(r.out);
  EXPECT_EQ(SeriousFindings(doc), (std::set<FindingKey>{{"critical", "port_state", "", ""}})) << r.out;
}

TEST(AuditIbsim, IbsimKilledMidRunExitsThreeWithinTheTimeout) {
  TempDir dir;
  FatTreeSpec spec;
  spec.leaves = 16;
  spec.hosts_per_leaf = 16;
  spec.spines = 4;
  Running fabric = StartWithSm(TwoLevelFatTree(spec).netfile, dir);
  ASSERT_TRUE(fabric.opensm);
  pid_t pid = fabric.ibsim->pid();
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(pid, SIGKILL);
  });
  ProcessResult r = fabric.ibsim->Run(
      {TopolaunchBinary(), "audit", "--fabric", "live", "--interval", "2", "--timeout", "4", "--prolog"},
      std::chrono::seconds(30));
  killer.join();
  EXPECT_EQ(r.exit_code, 3) << r.Describe() << r.out;
  EXPECT_LT(r.seconds, 5.5) << r.Describe();
  EXPECT_NE(r.out.find("not checked"), std::string::npos) << r.out;
}

TEST(AuditIbsim, NoSimulatorIsCouldNotCheck) {
  TempDir dir;
  ProcessSpec spec;
  spec.argv = {"ibsim-run", TopolaunchBinary(), "audit", "--fabric", "live", "--timeout", "5"};
  spec.env = {{"IBSIM_SOCKNAME", UniqueSocketName()}};
  spec.cwd = dir.path();
  ProcessResult r = RunProcess(spec);
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.out.find("could not check"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace topolaunch::testing
