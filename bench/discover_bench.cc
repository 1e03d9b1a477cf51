// discover benchmarks: prints figures, asserts nothing.
//
// 1. Live discovery of a generated 4,096-host two-level fat tree (128 leaves x
//    32 hosts, 32 spines) in ibsim: `topolaunch discover --fabric live`
//    against `ibnetdiscover`, alternating runs in the same simulator, wall
//    time and peak RSS of each, and the ratio of medians; ours both with
//    --no-layout and as the whole command (this machine's layout loaded
//    while the fabric is walked), and --no-layout at ibnetdiscover's 2 SMPs
//    in flight (what we add, apart from our default of 4). With BASELINE
//    (another build's topolaunch, e.g. the last release) that one runs in
//    the same rounds too, --no-layout (its topology.json must be byte for
//    byte ours but the time) and as the whole command.
// 2. Parsing an ibnetdiscover dump of at least 4 MB in-process (parse, then
//    parse + build + JSON), and the whole `discover --fabric FILE` command.
// 3. SMPs in flight (--max-smps) on the same ibsim fabric. ibsim answers at
//    once, so there the walk is CPU-bound and the setting changes little;
//    a real fabric is latency-bound: each directed-route SMP crosses switches
//    and waits for a switch's firmware. So this counts the SMPs one walk sends
//    (umad2sim's messages to ibsim, counted with strace -c) and reports the
//    walk's time as SMPs x round trip / SMPs in flight for 10,000 hosts
//    (SMPs scaled by the fabric's ports) at round trips of 10, 30 and 100 us.
//    Skipped without strace.
//
// Usage: discover_bench [RUNS [BASELINE]]   (RUNS default 3)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "bench_fabric.h"
#include "bench_stats.h"

#include "discover/ibnetdiscover_parser.h"
#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"
#include "support/subprocess.h"
#include "topolaunch/topology_json.h"

using namespace topolaunch;
using namespace topolaunch::testing;

using topolaunch::bench::Median;

namespace {

// A topology.json's bytes, less its time of writing (generated.at).
std::string ReadWithoutTimestamp(const std::string& path) {
  std::string bytes = ReadFile(path);
  size_t at = bytes.find("\"at\": \"");
  size_t end = at == std::string::npos ? at : bytes.find('"', at + 7);
  if (end != std::string::npos) bytes.erase(at + 7, end - (at + 7));
  return bytes;
}

int BenchLive(int runs, const std::string& baseline) {
  Result<bench::BenchFabric> bench_fabric = bench::StartBenchFatTree();
  if (!bench_fabric.ok()) {
    fmt::print(stderr, "ibsim did not start: {}\n", bench_fabric.error().Message());
    return 1;
  }
  const GeneratedFabric& fabric = bench_fabric->fabric;
  const TempDir& dir = *bench_fabric->dir;
  std::unique_ptr<IbsimFabric>& sim = bench_fabric->sim;
  fmt::print("live discovery: {} switches, {} CAs in ibsim\n", fabric.switches, fabric.cas);
  // Ours twice: the fabric alone, and the whole command as people type it
  // (this machine's layout too, loaded while the fabric is walked).
  std::vector<double> peer_s, ours_s, whole_s, same_s, peer_rss, ours_rss, base_s, base_whole_s;
  sim->Run({"ibnetdiscover"});  // warm-up: ibsim's first walk primes its tables
  using Argv = std::vector<std::string>;
  const Argv peer_argv = {"ibnetdiscover", dir.File("peer.out")};
  const Argv ours_argv = {TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "--timeout", "300",
                          "-o", dir.File("topology.json")};
  const Argv whole_argv = {TopolaunchBinary(), "discover", "--fabric", "live", "--timeout", "300", "-o",
                           dir.File("whole.json")};
  // The same walk with ibnetdiscover's 2 SMPs in flight (ours keeps 4):
  // what we add to the library's walk, apart from the setting.
  const Argv same_argv = {TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "--max-smps", "2",
                          "--timeout", "300", "-o", dir.File("same.json")};
  for (int i = 0; i < runs; ++i) {
    // Each round starts with the next one of the four, so none always runs
    // first (or right after another).
    ProcessResult peer, ours, whole, same;
    std::vector<std::pair<const Argv*, ProcessResult*>> order = {
        {&peer_argv, &peer}, {&ours_argv, &ours}, {&whole_argv, &whole}, {&same_argv, &same}};
    std::rotate(order.begin(), order.begin() + i % order.size(), order.end());
    for (auto& [argv, result] : order) *result = sim->Run(*argv, std::chrono::minutes(5));
    if (peer.exit_code != 0 || ours.exit_code != 0 || whole.exit_code != 0 || same.exit_code != 0) {
      fmt::print(stderr, "run failed:\n  ibnetdiscover: {}\n  topolaunch: {}\n  topolaunch with the layout: {}\n"
                 "  topolaunch --max-smps 2: {}\n", peer.Describe(), ours.Describe(), whole.Describe(), same.Describe());
      return 1;
    }
    if (!baseline.empty()) {
      // --no-layout, and as people type it (with this machine's layout).
      const Argv base_argv = {baseline, "discover", "--fabric", "live", "--no-layout", "--timeout", "300", "-o",
                              dir.File("baseline.json")};
      const Argv base_whole_argv = {baseline, "discover", "--fabric", "live", "--timeout", "300", "-o",
                                    dir.File("baseline-whole.json")};
      for (auto [argv, seconds] : {std::pair{&base_argv, &base_s}, std::pair{&base_whole_argv, &base_whole_s}}) {
        ProcessResult base = sim->Run(*argv, std::chrono::minutes(5));
        if (base.exit_code != 0) {
          fmt::print(stderr, "baseline run failed: {}\n", base.Describe());
          return 1;
        }
        seconds->push_back(base.seconds);
      }
      std::string theirs = ReadWithoutTimestamp(dir.File("baseline.json"));
      std::string mine = ReadWithoutTimestamp(dir.File("topology.json"));
      if (theirs != mine) {
        size_t at = static_cast<size_t>(std::mismatch(theirs.begin(), theirs.end(), mine.begin(), mine.end()).first -
                                        theirs.begin());
        size_t from = at > 200 ? at - 200 : 0;
        fmt::print(stderr, "run {}: the baseline's topology.json differs from ours at byte {}:\n--- baseline\n{}\n--- ours\n{}\n",
                   i + 1, at, theirs.substr(from, 400), mine.substr(from, 400));
        return 1;
      }
    }
    peer_s.push_back(peer.seconds);
    ours_s.push_back(ours.seconds);
    whole_s.push_back(whole.seconds);
    same_s.push_back(same.seconds);
    peer_rss.push_back(peer.max_rss_kb / 1024.0);
    ours_rss.push_back(std::max(ours.max_rss_kb, whole.max_rss_kb) / 1024.0);
    fmt::print("  run {}: ibnetdiscover {:.3f} s {:.1f} MiB | topolaunch --no-layout {:.3f} s {:.1f} MiB | "
               "with this machine's layout {:.3f} s {:.1f} MiB | --no-layout --max-smps 2 {:.3f} s\n",
               i + 1, peer.seconds, peer_rss.back(), ours.seconds, ours.max_rss_kb / 1024.0, whole.seconds,
               whole.max_rss_kb / 1024.0, same.seconds);
  }
  fmt::print("ibnetdiscover median: {:.3f} s, peak RSS {:.1f} MiB\n", Median(peer_s), Median(peer_rss));
  fmt::print("topolaunch discover --fabric live --no-layout median: {:.3f} s\n", Median(ours_s));
  fmt::print("topolaunch discover --fabric live (whole command, with the layout) median: {:.3f} s\n", Median(whole_s));
  fmt::print("topolaunch discover --fabric live --no-layout --max-smps 2 median: {:.3f} s\n", Median(same_s));
  fmt::print("ratio topolaunch/ibnetdiscover (time): fabric alone {:.2f}, whole command {:.2f}  (target <= 1.05); "
             "fabric alone at ibnetdiscover's 2 SMPs in flight {:.2f}\n",
             Median(ours_s) / Median(peer_s), Median(whole_s) / Median(peer_s), Median(same_s) / Median(peer_s));
  fmt::print("peak RSS: {:.1f} MiB  (target <= 64 MiB)\n", *std::max_element(ours_rss.begin(), ours_rss.end()));
  if (!baseline.empty()) {
    fmt::print("baseline --no-layout median: {:.3f} s, ratio to ibnetdiscover {:.2f}; its topology.json is the same "
               "bytes (but the time) in every run\n",
               Median(base_s), Median(base_s) / Median(peer_s));
    fmt::print("baseline whole command median: {:.3f} s, ratio to ibnetdiscover {:.2f}\n", Median(base_whole_s),
               Median(base_whole_s) / Median(peer_s));
  }
  return 0;
}

// Ports with a cable, over every node of the fabric.
long CabledPorts(const GeneratedFabric& fabric) {
  Result<Fabric> parsed = ParseIbnetdiscover(fabric.netfile, "generated.ibnet");
  long ports = 0;
  for (const FabricNode& node : parsed.ok() ? parsed->nodes : std::vector<FabricNode>{}) ports += static_cast<long>(node.ports.size());
  return std::max(ports, 1L);
}

// Syscalls of `argv` under ibsim, by name (strace -c's table).
std::map<std::string, long> SyscallCounts(IbsimFabric& sim, const TempDir& dir, std::vector<std::string> argv) {
  std::string table = dir.File("strace.txt");
  argv.insert(argv.begin(), {"strace", "-f", "-qq", "-c", "-o", table});
  ProcessResult r = sim.Run(argv, std::chrono::minutes(5));
  std::map<std::string, long> counts;
  std::ifstream in(table);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    // "% time seconds usecs/call calls [errors] syscall"
    if (f.size() >= 5 && std::isdigit(static_cast<unsigned char>(f[0][0]))) counts[f.back()] = std::atol(f[3].c_str());
  }
  if (r.exit_code != 0) counts.clear();
  return counts;
}

int BenchSmps(int runs) {
  if (access("/usr/bin/strace", X_OK) != 0) {
    fmt::print("\n--max-smps: skipped (no strace: apt-get install strace)\n");
    return 0;
  }
  Result<bench::BenchFabric> bench_fabric = bench::StartBenchFatTree();
  if (!bench_fabric.ok()) return 1;
  IbsimFabric& sim = *bench_fabric->sim;
  const TempDir& dir = *bench_fabric->dir;
  const GeneratedFabric& fabric = bench_fabric->fabric;
  sim.Run({"ibnetdiscover"});
  fmt::print("\n--max-smps on the same fabric in ibsim (CPU-bound there), median of {}:\n", runs);
  for (int smps : {1, 2, 4, 16}) {
    std::vector<double> ours, peer;
    auto run_ours = [&] {
      ours.push_back(sim.Run({TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "--max-smps", std::to_string(smps),
                              "--timeout", "300", "-o", dir.File("t.json")}, std::chrono::minutes(5)).seconds);
    };
    auto run_peer = [&] {
      peer.push_back(sim.Run({"ibnetdiscover", "--outstanding_smps", std::to_string(smps), dir.File("peer.out")},
                             std::chrono::minutes(5)).seconds);
    };
    for (int i = 0; i < runs; ++i) {
      // Alternating which goes first, as in the rounds above: a walk that
      // starts while ibsim still tears down the last one's client pays for it.
      if (i % 2 == 0) run_ours(), run_peer();
      else run_peer(), run_ours();
    }
    fmt::print("  {:>2} in flight: topolaunch {:.3f} s, ibnetdiscover {:.3f} s\n", smps, Median(ours), Median(peer));
  }
  // One walk's messages to ibsim: every SMP is one, and so is every answer.
  std::map<std::string, long> calls = SyscallCounts(sim, dir, {TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout",
                                                                "--timeout", "300", "-o", dir.File("t.json")});
  long smps = 0;
  std::string how;
  for (const char* name : {"sendto", "send", "sendmsg", "write"})
    if (calls.count(name) && calls[name] > smps) smps = calls[name], how = name;
  if (smps == 0) {
    fmt::print("  SMP count: strace saw no messages to ibsim\n");
    return 0;
  }
  long ports = CabledPorts(fabric);
  fmt::print("  one walk of {} switches and {} CAs ({} cabled ports) sends about {} SMPs ({} calls of {}), {:.1f} per port\n",
             fabric.switches, fabric.cas, ports, smps, smps, how, static_cast<double>(smps) / ports);
  // 10,000 hosts, scaled by cabled ports.
  double smps_10k = static_cast<double>(smps) / ports * CabledPorts(TwoLevelFatTree({.leaves = 250, .hosts_per_leaf = 40, .spines = 20}));
  fmt::print("  10,000 hosts (250 leaves x 40, 20 spines): about {:.0f} SMPs; the walk waits on round trips for:\n", smps_10k);
  fmt::print("    {:>12} {:>10} {:>10} {:>10} {:>10}\n", "round trip", "1 in flight", "2 (ibnd)", "4 (ours)", "16");
  for (double rtt_us : {10.0, 30.0, 100.0})
    fmt::print("    {:>9.0f} us {:>9.2f} s {:>9.2f} s {:>9.2f} s {:>9.2f} s\n", rtt_us, smps_10k * rtt_us / 1e6, smps_10k * rtt_us / 2e6,
               smps_10k * rtt_us / 4e6, smps_10k * rtt_us / 16e6);
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
  int status = BenchLive(runs, argc > 2 ? argv[2] : "");
  status |= BenchSmps(runs);
  return BenchParse(std::max(runs, 5)) | status;
}
