// discover benchmarks: prints figures, asserts nothing.
//
// 1. Live discovery of a generated 4,096-host two-level fat tree (128 leaves x
//    32 hosts, 32 spines) in ibsim: `topolaunch discover --fabric live`
//    against `ibnetdiscover`, alternating runs in the same simulator, wall
//    time and peak RSS of each, and the ratio of medians.
// 2. Parsing an ibnetdiscover dump of at least 4 MB in-process (parse, then
//    parse + build + JSON), and the whole `discover --fabric FILE` command.
//
// Usage: discover_bench [RUNS]   (default 3)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "bench_fabric.h"
#include "bench_stats.h"

#include "discover/ibnetdiscover_parser.h"
#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"
#include "topolaunch/topology_json.h"

using namespace topolaunch;
using namespace topolaunch::testing;

using topolaunch::bench::Median;

namespace {

int BenchLive(int runs) {
  Result<bench::BenchFabric> bench_fabric = bench::StartBenchFatTree();
  if (!bench_fabric.ok()) {
    fmt::print(stderr, "ibsim did not start: {}\n", bench_fabric.error().Message());
    return 1;
  }
  const GeneratedFabric& fabric = bench_fabric->fabric;
  const TempDir& dir = *bench_fabric->dir;
  std::unique_ptr<IbsimFabric>& sim = bench_fabric->sim;
  fmt::print("live discovery: {} switches, {} CAs in ibsim\n", fabric.switches, fabric.cas);
  std::vector<double> peer_s, ours_s, peer_rss, ours_rss;
  sim->Run({"ibnetdiscover"});  // warm-up: ibsim's first walk primes its tables
  for (int i = 0; i < runs; ++i) {
    ProcessResult peer = sim->Run({"ibnetdiscover", "-o", dir.File("peer.out")}, std::chrono::minutes(5));
    ProcessResult ours = sim->Run({TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "--timeout", "300",
                                      "-o", dir.File("topology.json")},
                                     std::chrono::minutes(5));
    if (peer.exit_code != 0 || ours.exit_code != 0) {
      fmt::print(stderr, "run failed:\n  ibnetdiscover: {}\n  topolaunch: {}\n", peer.Describe(), ours.Describe());
      return 1;
    }
    peer_s.push_back(peer.seconds);
    ours_s.push_back(ours.seconds);
    peer_rss.push_back(peer.max_rss_kb / 1024.0);
    ours_rss.push_back(ours.max_rss_kb / 1024.0);
    fmt::print("  run {}: ibnetdiscover {:.3f} s {:.1f} MiB | topolaunch {:.3f} s {:.1f} MiB\n", i + 1, peer.seconds,
               peer_rss.back(), ours.seconds, ours_rss.back());
  }
  fmt::print("ibnetdiscover median: {:.3f} s, peak RSS {:.1f} MiB\n", Median(peer_s), Median(peer_rss));
  fmt::print("topolaunch discover --fabric live median: {:.3f} s, peak RSS {:.1f} MiB\n", Median(ours_s),
             Median(ours_rss));
  fmt::print("ratio topolaunch/ibnetdiscover (time): {:.2f}  (target <= 1.20)\n", Median(ours_s) / Median(peer_s));
  fmt::print("peak RSS: {:.1f} MiB  (target <= 64 MiB)\n", *std::max_element(ours_rss.begin(), ours_rss.end()));
  return 0;
}

int BenchParse(int runs) {
  FatTreeSpec spec;
  spec.leaves = 240;  // spines have at most 254 ports
  spec.hosts_per_leaf = 40;
  spec.spines = 40;
  GeneratedFabric fabric = TwoLevelFatTree(spec);
  double mb = fabric.netfile.size() / 1e6;
  std::vector<double> parse_s, full_s;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Result<Fabric> parsed = ParseIbnetdiscover(fabric.netfile, "bench.ibnet");
    auto t1 = std::chrono::steady_clock::now();
    if (!parsed.ok()) {
      fmt::print(stderr, "parse failed: {}\n", parsed.error().Message());
      return 1;
    }
    std::string json = FormatTopologyJson(BuildTopology(*parsed, {}, {}));
    auto t2 = std::chrono::steady_clock::now();
    parse_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    full_s.push_back(std::chrono::duration<double>(t2 - t0).count());
  }
  fmt::print("dump parsing: {:.1f} MB, {} switches, {} CAs\n", mb, fabric.switches, fabric.cas);
  fmt::print("ParseIbnetdiscover median: {:.3f} s  (target < 0.300 s)\n", Median(parse_s));
  fmt::print("parse + build + topology.json median: {:.3f} s\n", Median(full_s));
  TempDir dir;
  std::ofstream(dir.File("dump.ibnet")) << fabric.netfile;
  ProcessSpec command;
  command.argv = {TopolaunchBinary(), "discover", "--fabric", dir.File("dump.ibnet"), "-o", dir.File("t.json")};
  ProcessResult cmd = RunProcess(command);
  fmt::print("topolaunch discover --fabric FILE (whole command): {:.3f} s, peak RSS {:.1f} MiB (exit {})\n", cmd.seconds,
             cmd.max_rss_kb / 1024.0, cmd.exit_code);
  return cmd.exit_code == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  // Live first: a forked child's peak RSS counts the parent's pages until
  // it execs, so the figures are upper bounds, tightest while this process
  // is still small (before the 4 MB parse below).
  int status = BenchLive(runs);
  return BenchParse(std::max(runs, 5)) | status;
}
