// audit benchmark: prints figures, asserts nothing.
//
// A full-fabric audit of the generated 4,096-host ibsim fabric (two-level
// fat tree, 128 leaves x 32 hosts, 32 spines) with OpenSM running:
// `topolaunch audit --fabric live` (walk, link checks, PortCounters of every
// linked port with queries in flight in parallel) against `ibqueryerrors`
// (walk, then one PortCounters query at a time), alternating in the same
// simulator, and the ratio of medians (target <= 1.0).
//
// Usage: audit_bench [RUNS]   (default 3)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "bench_fabric.h"
#include "bench_stats.h"

#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"

using namespace topolaunch;
using namespace topolaunch::testing;

using topolaunch::bench::Median;

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  Result<bench::BenchFabric> bench_fabric = bench::StartBenchFatTree();
  if (!bench_fabric.ok()) {
    fmt::print(stderr, "ibsim did not start: {}\n", bench_fabric.error().Message());
    return 1;
  }
  const GeneratedFabric& fabric = bench_fabric->fabric;
  const TempDir& dir = *bench_fabric->dir;
  std::unique_ptr<IbsimFabric>& sim = bench_fabric->sim;
  auto sm = OpenSm::Start(*sim, std::chrono::minutes(5));
  if (!sm.ok()) {
    fmt::print(stderr, "opensm did not become master: {}\n", sm.error().Message());
    return 1;
  }
  fmt::print("full-fabric audit: {} switches, {} CAs in ibsim, OpenSM master\n", fabric.switches, fabric.cas);
  sim->Run({"ibqueryerrors"}, std::chrono::minutes(5));  // warm-up
  std::vector<double> peer_s, ours_s;
  for (int i = 0; i < runs; ++i) {
    ProcessResult peer = sim->Run({"ibqueryerrors"}, std::chrono::minutes(5));
    ProcessResult ours = sim->Run({TopolaunchBinary(), "audit", "--fabric", "live", "--timeout", "300", "--json", "-o",
                                      dir.File("audit.json")},
                                     std::chrono::minutes(5));
    if (ours.exit_code != 0) {
      fmt::print(stderr, "run failed:\n  topolaunch: {}\n", ours.Describe());
      return 1;
    }
    ours_s.push_back(ours.seconds);
    // ibqueryerrors exits non-zero when it reports errors; a crash (seen
    // under ibsim: SIGSEGV now and then) leaves that run out of its median.
    if (peer.exit_code < 0) {
      fmt::print("  run {}: ibqueryerrors crashed ({}), not counted | topolaunch audit {:.3f} s\n", i + 1,
                 peer.Describe(), ours.seconds);
      continue;
    }
    peer_s.push_back(peer.seconds);
    fmt::print("  run {}: ibqueryerrors {:.3f} s | topolaunch audit {:.3f} s ({:.1f} MiB)\n", i + 1, peer.seconds,
               ours.seconds, ours.max_rss_kb / 1024.0);
  }
  if (peer_s.empty()) {
    fmt::print(stderr, "no ibqueryerrors run completed: no ratio\n");
    return 1;
  }
  fmt::print("ibqueryerrors median: {:.3f} s\n", Median(peer_s));
  fmt::print("topolaunch audit --fabric live median: {:.3f} s\n", Median(ours_s));
  fmt::print("ratio topolaunch/ibqueryerrors (time): {:.2f}  (target <= 1.00)\n", Median(ours_s) / Median(peer_s));
  return 0;
}
