// `topolaunch plan` end to end: the binary on generated topology files.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "rankmap/plan_json.h"
#include "rankmap/rank_map.h"
#include "rankmap/rankmap_test_util.h"

namespace topolaunch::testing {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;
const Env kNoSlurm{{"SLURM_JOB_NODELIST", ""}};

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string ReadFile(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

class PlanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // 4 leaves x 4 hosts with shuffled names, each host with 2 GPUs.
    Topology t = TopologyOf(TwoLevelFatTree({.leaves = 4, .hosts_per_leaf = 4, .spines = 2, .shuffled_names = true}));
    for (const std::string& host : HostNames(t)) {
      HostLayout l;
      l.numa_nodes = {{0, 0, {0, 1, 2, 3}, 0}};
      for (const char* bus : {"0000:01:00.0", "0000:02:00.0"}) {
        Gpu gpu;
        gpu.pci_bus_id = bus;
        gpu.vendor = "nvidia";
        gpu.numa = 0;
        l.gpus.push_back(gpu);
      }
      AttachLayout(t, host, l);
    }
    topology_ = dir_.File("topology.json");
    WriteFile(topology_, FormatTopologyJson(t));
  }

  ProcessResult Plan(std::vector<std::string> args, const Env& env = kNoSlurm) {
    args.insert(args.begin(), {"plan", "--topology", topology_});
    return RunTopolaunch(args, env);
  }

  std::vector<std::string> Hosts(const ProcessResult& r) {
    Result<topolaunch::Plan> plan = ParsePlanJson(r.out, "<stdout>");
    EXPECT_TRUE(plan.ok()) << r.out;
    std::vector<std::string> hosts;
    if (plan.ok()) for (const PlanNode& n : plan->nodes) hosts.push_back(n.host);
    return hosts;
  }

  TempDir dir_;
  std::string topology_;
};

TEST_F(PlanCli, HelpHasExamples) {
  ProcessResult r = RunTopolaunch({"plan", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
}

// `a slots=8` and `b slots=4` were planned as 8 on each, silently.
TEST_F(PlanCli, HostfileSlotsThatDifferAreRefusedUnlessTheRanksAreGiven) {
  std::string hosts = dir_.File("hosts");
  WriteFile(hosts, "a slots=8\nb slots=4\n");
  ProcessResult r = RunTopolaunch({"plan", "--hostfile", hosts, "--json"}, kNoSlurm);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: error: " + hosts + ": slots differ (a slots=8, b slots=4)"), std::string::npos) << r.err;
  ProcessResult given = RunTopolaunch({"plan", "--hostfile", hosts, "--nproc-per-node", "4", "--json"}, kNoSlurm);
  ASSERT_EQ(given.exit_code, 0) << given.Describe();
  Result<topolaunch::Plan> plan = ParsePlanJson(given.out, "<stdout>");
  ASSERT_TRUE(plan.ok()) << given.out;
  EXPECT_EQ(plan->world_size, 8);
  WriteFile(hosts, "a slots=4\nb slots=4\n");
  ProcessResult agree = RunTopolaunch({"plan", "--hostfile", hosts, "--json"}, kNoSlurm);
  ASSERT_EQ(agree.exit_code, 0) << agree.Describe();
  EXPECT_TRUE(ParsePlanJson(agree.out, "<stdout>").ok());
}

TEST_F(PlanCli, JsonPlanForAllHostsMeetsTheBound) {
  ProcessResult r = Plan({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<topolaunch::Plan> plan = ParsePlanJson(r.out, "<stdout>");
  ASSERT_TRUE(plan.ok()) << plan.error().Message();
  EXPECT_EQ(plan->nproc_per_node, 2);  // GPUs per host
  EXPECT_EQ(plan->world_size, 32);
  EXPECT_EQ(plan->metrics.ring_leaf_crossings, 4);
  EXPECT_EQ(plan->metrics.ring_leaf_crossings_lower_bound, 4);
  EXPECT_GT(plan->metrics.hostname_order_ring_leaf_crossings, 4);
}

// --format hostfile and slurm-hostfile hold the JSON plan's order; the
// hostfile reads back through --hostfile (the same `HOST slots=N` form
// DeepSpeed and Open MPI read) to the same plan.
TEST_F(PlanCli, LauncherFormatsKeepThePlanOrder) {
  ProcessResult json = Plan({"--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::vector<std::string> order = Hosts(json);
  ASSERT_EQ(order.size(), 16u);
  ProcessResult hostfile = Plan({"--format", "hostfile"});
  ASSERT_EQ(hostfile.exit_code, 0) << hostfile.err;
  std::string expected;
  for (const std::string& host : order) expected += host + " slots=2\n";
  EXPECT_EQ(hostfile.out, expected);
  ProcessResult ranks = Plan({"--format", "slurm-hostfile"});
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  expected.clear();
  for (const std::string& host : order) expected += host + "\n" + host + "\n";
  EXPECT_EQ(ranks.out, expected);
  ProcessResult torchrun = Plan({"--format", "torchrun", "--master-port", "29777"});
  ASSERT_EQ(torchrun.exit_code, 0) << torchrun.err;
  std::istringstream lines(torchrun.out);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    ASSERT_LT(n, order.size());
    EXPECT_TRUE(line.starts_with(order[n] + "\t'torchrun' '--nnodes=16' '--nproc_per_node=2'")) << line;
    EXPECT_NE(line.find(fmt::format("'--node_rank={}' '--master_addr={}' '--master_port=29777'", n, order[0])), std::string::npos) << line;
  }
  EXPECT_EQ(n, order.size());

  WriteFile(dir_.File("hosts"), hostfile.out);
  ProcessResult again = RunTopolaunch({"plan", "--hostfile", dir_.File("hosts"), "--json"}, kNoSlurm);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Hosts(again), order) << "without a topology the file's order is kept";
  EXPECT_NE(again.out.find("\"nproc_per_node\": 2"), std::string::npos);

  ProcessResult rankfile = Plan({"--format", "rankfile"});
  ASSERT_EQ(rankfile.exit_code, 0) << rankfile.err;
  expected.clear();
  for (size_t i = 0; i < order.size(); ++i)
    expected += fmt::format("rank {}={} slot=0-1\nrank {}={} slot=2-3\n", 2 * i, order[i], 2 * i + 1, order[i]);
  EXPECT_EQ(rankfile.out, expected);

  ProcessResult bad = Plan({"--format", "mpich"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("--format"), std::string::npos) << bad.err;
}

// `--format rankfile` read by its real consumer, Open MPI's mpirun, on this
// machine's own layout: each rank runs on the CPUs its line names.
TEST_F(PlanCli, TheRankfileIsReadByMpirunAndEachRankRunsOnItsCpus) {
  ASSERT_EQ(access("/usr/bin/mpirun", X_OK), 0) << "Open MPI is not installed (openmpi-bin: bash tests/install_deps.sh test)";
  std::string local = dir_.File("local.json");
  ProcessResult discovered = RunTopolaunch({"discover", "--fabric", "none", "-o", local}, kNoSlurm);
  ASSERT_EQ(discovered.exit_code, 0) << discovered.Describe();
  int ranks = std::min(2, static_cast<int>(std::thread::hardware_concurrency()));
  std::string rankfile = dir_.File("ranks");
  ProcessResult planned = RunTopolaunch(
      {"plan", "--topology", local, "--nproc-per-node", std::to_string(ranks), "--format", "rankfile", "-o", rankfile}, kNoSlurm);
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  std::map<int, std::string> want;  // rank -> its slot list
  std::string host;                 // this machine, as the rankfile names it
  std::istringstream lines(ReadFile(rankfile));
  for (std::string line; std::getline(lines, line);) {
    size_t eq = line.find('='), slot = line.find(" slot=");
    want[std::stoi(line.substr(5, eq - 5))] = line.substr(slot + 6);
    host = line.substr(eq + 1, slot - eq - 1);
  }
  ASSERT_EQ(want.size(), static_cast<size_t>(ranks)) << ReadFile(rankfile);
  // Each rank's CPUs as mpirun bound them, for the rankfile at `path`.
  auto bound = [ranks](const std::string& path) {
    ProcessSpec spec;
    spec.argv = {"mpirun", "--allow-run-as-root", "--rankfile", path, "--mca", "rmaps_rank_file_physical", "1",
                 "-np", std::to_string(ranks), "sh", "-c",
                 "echo \"$OMPI_COMM_WORLD_RANK $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)\""};
    spec.timeout = std::chrono::seconds(60);
    ProcessResult r = RunProcess(spec);
    EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << ReadFile(path);
    std::map<int, std::string> got;
    std::istringstream out(r.out);
    for (int rank; out >> rank;) out >> got[rank];
    return got;
  };
  EXPECT_EQ(bound(rankfile), want);
  // The file decides, not mpirun's own placement: the lines' slots swapped, the binding follows.
  if (ranks == 2) {
    WriteFile(dir_.File("swapped"), fmt::format("rank 0={0} slot={1}\nrank 1={0} slot={2}\n", host, want[1], want[0]));
    EXPECT_EQ(bound(dir_.File("swapped")), (std::map<int, std::string>{{0, want[1]}, {1, want[0]}}));
  }
}

TEST_F(PlanCli, HostsFlagWinsOverSlurmNodelist) {
  Env slurm{{"SLURM_JOB_NODELIST", "node[01-03]"}};
  EXPECT_EQ(NaturalSorted(Hosts(Plan({"--json"}, slurm))), (std::vector<std::string>{"node01", "node02", "node03"}));
  EXPECT_EQ(Hosts(Plan({"--json", "--hosts", "node[10-11]"}, slurm)), (std::vector<std::string>{"node10", "node11"}));
  WriteFile(dir_.File("hosts"), "node05 slots=1\nnode06 slots=1\n");
  ProcessResult r = Plan({"--json", "--hostfile", dir_.File("hosts")}, slurm);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"nproc_per_node\": 1"), std::string::npos);  // from slots=1
  ProcessResult bad_env = Plan({"--json"}, {{"SLURM_JOB_NODELIST", "node[01-"}});
  EXPECT_EQ(bad_env.exit_code, 2);
  EXPECT_NE(bad_env.err.find("SLURM_JOB_NODELIST"), std::string::npos) << bad_env.err;
}

TEST_F(PlanCli, ExitCodesAndMessages) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  WriteFile(dir_.File("bad-hostfile"), "node01\nnode01 slots=x\n");
  WriteFile(dir_.File("audit.json"), R"({"schema": "topolaunch.audit/1", "findings": [{"severity": "bad"}]})");
  std::vector<Case> cases = {
      {{"--hosts", "node01,ghost7"}, 2, "ghost7"},
      {{"--hosts", "node01", "--hostfile", dir_.File("bad-hostfile")}, 2, "excludes"},
      {{"--hostfile", dir_.File("bad-hostfile")}, 2, "bad-hostfile:2"},
      {{"--nnodes", "40"}, 2, "--nnodes"},
      {{"--nproc-per-node", "3"}, 2, "NCCL refuses two ranks on one GPU"},
      {{"--audit", dir_.File("audit.json")}, 2, "audit.json: $.findings[0].check"},
      {{"--audit", dir_.File("missing.json")}, 2, "missing.json"},
      {{"--cuda-visible-devices", "GPU-1234"}, 2, "CUDA_VISIBLE_DEVICES"},
      {{"--exclude", "node[01-16]"}, 2, "every host was excluded"},
  };
  for (const Case& c : cases) {
    ProcessResult r = Plan(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << fmt::format("{}", fmt::join(c.args, " ")) << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  ProcessResult bad_topology = RunTopolaunch({"plan", "--topology", dir_.File("audit.json"), "--hosts", "a"}, kNoSlurm);
  EXPECT_EQ(bad_topology.exit_code, 2);
  EXPECT_NE(bad_topology.err.find("audit.json"), std::string::npos);
}

TEST_F(PlanCli, UnknownHostsAllowedSkippedHostsSaid) {
  ProcessResult r = Plan({"--hosts", "ghost1,node01,node02", "--allow-unknown", "--exclude", "node02", "--nproc-per-node", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("not on the fabric (last): ghost1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node02: excluded (--exclude)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabric (where ranks land):"), std::string::npos);
}

TEST_F(PlanCli, OutputFileIsWrittenAtomically) {
  std::string out = dir_.File("plan.json");
  ASSERT_EQ(Plan({"--json", "-o", out, "--hosts", "node[01-04]"}).exit_code, 0);
  std::string first = ReadFile(out);
  EXPECT_TRUE(ParsePlanJson(first, out).ok());
  EXPECT_EQ(Plan({"--json", "-o", out, "--hosts", "ghost1"}).exit_code, 2);
  EXPECT_EQ(ReadFile(out), first);  // a failed plan leaves the old file alone
  ProcessResult r = Plan({"--json", "-o", dir_.File("no/such/dir/plan.json")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST_F(PlanCli, NoTopologyGivenOrder) {
  ProcessResult r = RunTopolaunch({"plan", "--hosts", "b,a", "--nproc-per-node", "1", "--json"}, kNoSlurm);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Hosts(r), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(RunTopolaunch({"plan"}, kNoSlurm).exit_code, 2);
}

}  // namespace
}  // namespace topolaunch::testing
