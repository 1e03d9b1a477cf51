// Scoring rank orders by simulated all-reduce time.
//
// SMPI maps line i of the hostfile to rank i, so each order becomes a
// hostfile over the simulated fat tree's hosts h0..h255 (host h(16*l + p)
// is port p of leaf l). A generated fabric of the same shape supplies the
// cabling (which generated host sits on which leaf port) and names that do
// not follow it; topolaunch plans it like any other topology.
#include <algorithm>
#include <fstream>
#include <map>
#include <random>

#include <fmt/format.h>

#include "plan_bench_simgrid.h"
#include "rankmap/plan_builder.h"
#include "rankmap/rank_map.h"
#include "rankmap/rankmap_test_util.h"
#include "support/slurm_harness.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

using namespace topolaunch;
using namespace topolaunch::testing;

namespace {

constexpr int kLeaves = 16, kHostsPerLeaf = 16, kSpines = 4;

constexpr const char* kProgram = R"(#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = atoi(argv[1]), rank;
  double* a = SMPI_SHARED_MALLOC(n * sizeof(double));
  double* b = SMPI_SHARED_MALLOC(n * sizeof(double));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  t = MPI_Wtime() - t;
  if (rank == 0) printf("allreduce_s %.6f\n", t);
  SMPI_SHARED_FREE(a);
  SMPI_SHARED_FREE(b);
  MPI_Finalize();
  return 0;
}
)";

std::string Platform() {
  return fmt::format(R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="ft" prefix="h" suffix="" radical="0-{}" speed="100Gf" bw="25GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;{},{};1,{};1,1" loopback_bw="100GBps" loopback_lat="0"/>
</platform>
)", kLeaves * kHostsPerLeaf - 1, kHostsPerLeaf, kLeaves, kSpines);
}

// Simulated seconds of one all-reduce with `order` as ranks 0.., or < 0.
double Simulate(const TempDir& dir, const std::string& name, const std::vector<std::string>& order,
                const std::map<std::string, int>& sim_host) {
  std::ofstream hostfile(dir.File(name));
  for (const std::string& host : order) hostfile << "h" << sim_host.at(host) << "\n";
  hostfile.close();
  ProcessSpec spec;
  spec.argv = {"smpirun", "-np", std::to_string(order.size()), "-platform", dir.File("platform.xml"),
               "-hostfile", dir.File(name), "--cfg=smpi/allreduce:lr", "--cfg=smpi/simulate-computation:no",
               "--cfg=smpi/host-speed:1Gf", dir.File("allreduce"), "1048576"};
  spec.timeout = std::chrono::minutes(5);
  ProcessResult r = RunProcess(spec);
  size_t at = r.out.find("allreduce_s ");
  if (r.exit_code != 0 || at == std::string::npos) {
    fmt::print("  smpirun failed for {}: {}\n", name, r.Describe());
    return -1;
  }
  fmt::print("  {:<16} {:8.2f} ms simulated  ({:.1f} s wall)\n", name, std::stod(r.out.substr(at + 12)) * 1e3, r.seconds);
  return std::stod(r.out.substr(at + 12));
}

}  // namespace

int RunSimgridBench() {
  if (FindProgram("smpicc").empty() || FindProgram("smpirun").empty()) {
    fmt::print("  skipped: smpicc/smpirun not found (apt-get install libsimgrid-dev)\n");
    return 0;
  }
  TempDir dir;
  std::ofstream(dir.File("allreduce.c")) << kProgram;
  std::ofstream(dir.File("platform.xml")) << Platform();
  ProcessSpec compile;
  compile.argv = {"smpicc", "-O1", dir.File("allreduce.c"), "-o", dir.File("allreduce")};
  ProcessResult cc = RunProcess(compile);
  if (cc.exit_code != 0) {
    fmt::print("  skipped: smpicc failed: {}\n", cc.Describe());
    return 0;
  }
  GeneratedFabric fabric = TwoLevelFatTree({.leaves = kLeaves, .hosts_per_leaf = kHostsPerLeaf, .spines = kSpines,
                                            .uplinks_per_spine = 1, .shuffled_names = true});
  std::map<std::string, int> sim_host, next_port;  // generated host -> SimGrid host index
  for (const std::string& host : fabric.hosts) {
    const std::string& leaf = fabric.host_leaves.at(host).front();
    int leaf_index = std::stoi(leaf.substr(leaf.find_first_of("0123456789"))) - 1;
    sim_host[host] = leaf_index * kHostsPerLeaf + next_port[leaf]++;
  }
  Topology topology = TopologyOf(fabric);
  PlanRequest request;
  request.nproc_per_node = 1;
  Result<Plan> plan = ComputePlan(&topology, request);
  if (!plan.ok()) {
    fmt::print("  plan failed: {}\n", plan.error().Message());
    return 1;
  }
  std::vector<std::string> ours;
  for (const PlanNode& n : plan->nodes) ours.push_back(n.host);
  std::vector<std::string> hostname = NaturalSorted(ours), random = ours;
  std::shuffle(random.begin(), random.end(), std::mt19937(42));
  fmt::print("  {} hosts ({} leaves x {}, {} spines), names shuffled against the cabling; 8 MB all-reduce\n",
             ours.size(), kLeaves, kHostsPerLeaf, kSpines);
  double t_ours = Simulate(dir, "topolaunch", ours, sim_host);
  double t_name = Simulate(dir, "hostname-order", hostname, sim_host);
  double t_random = Simulate(dir, "random-order", random, sim_host);
  if (t_ours > 0 && t_name > 0 && t_random > 0)
    fmt::print("  hostname order / topolaunch = {:.2f}x; random order / topolaunch = {:.2f}x\n", t_name / t_ours,
               t_random / t_ours);
  return 0;
}
