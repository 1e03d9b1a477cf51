// plan benchmarks: prints figures, asserts nothing.
//
// 1. Planning time for 12,500 hosts x 8 ranks (100,000 ranks) on a generated
//    three-level fat tree whose hosts all carry an 8-GPU, 8-NIC layout:
//    ComputePlan (order + bindings + metrics) and FormatPlanJson, median of
//    RUNS. The same at 3,125 hosts, with allocation counts and peak live
//    heap bytes of ComputePlan (counted by this binary's operator new), to
//    show growth linear in hosts.
//    Then the whole command at 12,500 hosts, JSON in and out:
//    `topolaunch plan --topology T --hostfile H --nproc-per-node 8 --json`,
//    wall and CPU time and peak RSS, median of RUNS (target <= 0.5 s,
//    <= 100 MiB), for a topology of the fabric alone and for one that
//    carries every host's layout (20 times the bytes).
// 2. Order quality (plan_bench_simgrid.cc): simulated ring all-reduce time
//    with SimGrid/SMPI on a 256-host fat tree for topolaunch's order,
//    hostname order and a random order. Skipped with a message when smpicc
//    or smpirun is missing (apt-get install libsimgrid-dev).
//
// Usage: plan_bench [RUNS [--no-simgrid]]   (RUNS default 5)
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "bench_process.h"
#include "bench_stats.h"

#include "plan_bench_simgrid.h"
#include "rankmap/plan_builder.h"
#include "rankmap/plan_json.h"
#include "rankmap/rankmap_test_util.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/topology_json.h"

using topolaunch::bench::Median;

namespace {

// Heap accounting for the memory figures: counts every allocation of this
// process and tracks the peak of live bytes.
std::atomic<bool> g_tracking{false};  // only while measuring memory: it costs time
std::atomic<long> g_allocations{0};
std::atomic<long> g_live{0};
std::atomic<long> g_peak{0};

void Track(void* p) {
  if (!p || !g_tracking.load(std::memory_order_relaxed)) return;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  long live = g_live.fetch_add(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed) +
              static_cast<long>(malloc_usable_size(p));
  long peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {}
}

void Untrack(void* p) {
  if (p && g_tracking.load(std::memory_order_relaxed)) g_live.fetch_sub(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed);
}

}  // namespace

// GCC sees free() inside the replaced operator delete as a mismatch with
// the replaced operator new; both are ours and both use malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  void* p = std::malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  Track(p);
  return p;
}
void operator delete(void* p) noexcept {
  Untrack(p);
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  Untrack(p);
  std::free(p);
}
#pragma GCC diagnostic pop

using namespace topolaunch;
using namespace topolaunch::testing;

namespace {

// CPU time of this thread: the build machine is shared, and wall time under
// load says more about the neighbours than about the planner.
double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// A DGX-like host: 2 sockets x 56 cores x 2 threads, 8 GPUs and 8 HCAs,
// GPU i and mlx5_i behind one PCIe switch.
HostLayout DgxLayout() {
  HostLayout l;
  l.cores = 112;
  l.pus = 224;
  l.numa_nodes = {{0, 0, *ParseCpuList("0-55,112-167", "bench"), 0}, {1, 1, *ParseCpuList("56-111,168-223", "bench"), 0}};
  for (int i = 0; i < 8; ++i) {
    Gpu g;
    g.pci_bus_id = fmt::format("0000:{:02x}:00.0", 0x10 * (i + 1));
    g.vendor = "nvidia";
    g.numa = i / 4;
    l.gpus.push_back(g);
    Nic n;
    n.name = fmt::format("mlx5_{}", i);
    n.kind = "openfabrics";
    n.numa = i / 4;
    l.nics.push_back(n);
  }
  for (int g = 0; g < 8; ++g)
    for (int n = 0; n < 8; ++n)
      l.gpu_nic_paths.push_back({l.gpus[g].pci_bus_id, l.nics[n].name,
                                 g == n ? PcieRelation::kSamePcieSwitch
                                        : g / 4 == n / 4 ? PcieRelation::kSameSocket : PcieRelation::kAcrossSockets});
  return l;
}

// The generated fabric of `pods` pods, every host with the DGX-like layout.
Topology BenchTopology(int pods, int hosts_per_leaf) {
  Topology topology = TopologyOf(ThreeLevelFatTree(
      {.pods = pods, .leaves_per_pod = 25, .hosts_per_leaf = hosts_per_leaf, .spines_per_pod = 8, .cores = 8}));
  HostLayout layout = DgxLayout();
  for (TopologyHost& h : topology.hosts) h.layout = layout;
  return topology;
}

// The whole `plan` command as a user runs it: topology.json and a hostfile
// (in reverse order) in, the plan's JSON out. Without layouts the file is
// the fabric alone (as `discover` writes it without --layout-dir).
void BenchCommand(int pods, int hosts_per_leaf, int runs, bool layouts) {
  TempDir dir;
  // The files are made in a child: a child's peak RSS (wait4) counts the
  // pages it had before exec, so this process stays small for the runs.
  pid_t maker = fork();
  if (maker == 0) {
    Topology topology = BenchTopology(pods, hosts_per_leaf);
    if (!layouts)
      for (TopologyHost& h : topology.hosts) h.layout.reset();
    std::ofstream(dir.File("topology.json")) << FormatTopologyJson(topology);
    std::ofstream hostfile(dir.File("hosts"));
    std::vector<std::string> hosts = HostNames(topology);
    for (auto h = hosts.rbegin(); h != hosts.rend(); ++h) hostfile << *h << "\n";
    hostfile.close();
    _exit(hostfile ? 0 : 1);
  }
  int status = 0;
  if (maker < 0 || waitpid(maker, &status, 0) != maker || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print("could not write the plan command's input\n");
    return;
  }
  ProcessSpec command;
  command.argv = {TopolaunchBinary(), "plan", "--topology", dir.File("topology.json"), "--hostfile", dir.File("hosts"),
                  "--nproc-per-node", "8", "--json", "-o", dir.File("plan.json")};
  // CPU from the children's rusage (RunProcess waits for each).
  auto children_cpu = [] {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return bench::CpuSeconds(u);
  };
  std::vector<double> wall, cpu, rss;
  for (int i = 0; i < runs; ++i) {
    double before = children_cpu();
    ProcessResult r = RunProcess(command);
    if (r.exit_code != 0) {
      fmt::print("plan command failed: {}\n", r.Describe());
      return;
    }
    wall.push_back(r.seconds);
    cpu.push_back(children_cpu() - before);
    rss.push_back(r.max_rss_kb / 1024.0);
  }
  std::error_code ec;
  fmt::print("  whole command, {} hosts x 8 ranks, {} (topology.json {:.1f} MB in, plan.json {:.1f} MB out): median {:.3f} s "
             "wall, {:.3f} s CPU, peak RSS {:.1f} MiB (of {} runs){}\n",
             pods * 25 * hosts_per_leaf, layouts ? "every host's layout" : "fabric only",
             std::filesystem::file_size(dir.File("topology.json"), ec) / 1e6,
             std::filesystem::file_size(dir.File("plan.json"), ec) / 1e6, Median(wall), Median(cpu), Median(rss), runs,
             layouts ? "" : fmt::format("; target <= 0.5 s, <= 100 MiB: {:.2f}x, {:.2f}x", Median(wall) / 0.5, Median(rss) / 100));
}

void BenchSize(int pods, int hosts_per_leaf, int runs) {
  Topology topology = BenchTopology(pods, hosts_per_leaf);
  PlanRequest request;
  request.hosts = HostNames(topology);
  std::reverse(request.hosts.begin(), request.hosts.end());
  std::vector<double> plan_ms, json_ms, plan_wall_ms;
  long allocations = 0, peak = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = CpuMs();
    Result<Plan> plan = ComputePlan(&topology, request);
    double c1 = CpuMs();
    auto t1 = std::chrono::steady_clock::now();
    if (!plan.ok()) {
      fmt::print("plan failed: {}\n", plan.error().Message());
      return;
    }
    std::string json = FormatPlanJson(*plan);
    double c2 = CpuMs();
    plan_ms.push_back(c1 - c0);
    json_ms.push_back(c2 - c1);
    plan_wall_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i == 0)
      fmt::print("  {} hosts x {} ranks = {} ranks; leaf crossings {} (bound {}); plan.json {:.1f} MB\n",
                 plan->nodes.size(), plan->nproc_per_node, plan->world_size, plan->metrics.ring_leaf_crossings,
                 plan->metrics.ring_leaf_crossings_lower_bound, json.size() / 1e6);
  }
  {  // one more run, counted: live bytes of blocks freed during it but allocated before are not tracked
    g_allocations = 0, g_live = 0, g_peak = 0;
    g_tracking = true;
    Result<Plan> plan = ComputePlan(&topology, request);
    g_tracking = false;
    allocations = g_allocations.load();
    peak = g_peak.load();
  }
  size_t hosts = topology.hosts.size();
  fmt::print("  ComputePlan median {:.1f} ms CPU ({:.1f} ms wall); FormatPlanJson median {:.1f} ms CPU (of {} runs)\n",
             Median(plan_ms), Median(plan_wall_ms), Median(json_ms), runs);
  fmt::print("  ComputePlan heap: {} allocations ({:.1f} per host), peak {:.1f} MB live ({:.0f} bytes per host)\n",
             allocations, static_cast<double>(allocations) / hosts, peak / 1e6, static_cast<double>(peak) / hosts);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  fmt::print("planning, three-level fat tree, 25 leaves per pod, DGX-like layouts:\n");
  // The whole command first, while this process is small (see BenchCommand).
  BenchCommand(10, 50, runs, false);
  BenchCommand(10, 50, runs, true);
  BenchSize(5, 25, runs);   // 3,125 hosts
  BenchSize(10, 50, runs);  // 12,500 hosts
  if (argc > 2 && std::string(argv[2]) == "--no-simgrid") return 0;
  fmt::print("\norder quality, SimGrid ring all-reduce:\n");
  return RunSimgridBench();
}
