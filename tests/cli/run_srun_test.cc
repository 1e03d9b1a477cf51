// `topolaunch run` inside a real Slurm allocation: slurmctld on the head
// namespace of a three-node NetnsTestbed, one slurmd per node, Debian's
// torchrun. The login side has no SSH key unless a test gives it one, so
// only srun can reach the nodes. The fabric (ibsim, read by `discover
// --fabric live`) puts node1 and node3 on one leaf and node2 on the other,
// so the plan's order is not the allocation's sorted order. The login side
// is walled as at a site: from the nodes it admits connections only to
// slurmctld and to slurm.conf's SrunPortRange.
//
// The workers are plain Python (no torch import: the suite stays quick on
// two cores); torchrun still starts them, with static rendezvous.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "audit/audit_fake_sysfs.h"
#include "cli/run_test_util.h"
#include "launch/command.h"
#include "support/slurm_cluster.h"

namespace topolaunch::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kNodes = 3;
constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kTorchrun = "/usr/bin/torchrun --redirects 9:0 --tee 9:0";  // Debian's torch 1.13 needs these
constexpr const char* kSecret = "s3cr3t-srun-token-93ab";

// Each worker: its facts as one JSON line (its Slurm variables with
// SHOW_SLURM set; how opening each device in GPU_DEVICES ends: ENXIO where
// its cgroup lets it, EPERM where not; the CPUs it may run on), a marker
// file, then `hold` seconds of sleep.
constexpr const char* kFactsScript = R"PY(import errno, hashlib, json, os, socket, sys, time
secret = os.environ.get("MY_TOKEN")
def opened(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print("@facts " + json.dumps({"rank": int(os.environ["RANK"]), "host": socket.gethostname(),
    "step": os.environ.get("SLURM_STEP_ID"), "job": os.environ.get("SLURM_JOB_ID"), "argv": sys.argv[1:],
    "mpi_vars": sorted(k for k in os.environ if k.startswith("PMI")),
    "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"), "cpus": sorted(os.sched_getaffinity(0)),
    "devices": [opened(p) for p in os.environ.get("GPU_DEVICES", "").split(":") if p],
    "slurm": {k: v for k, v in os.environ.items() if k.startswith("SLURM") and os.environ.get("SHOW_SLURM")},
    "secret_sha256": hashlib.sha256(secret.encode()).hexdigest() if secret else None}), flush=True)
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready-" + os.environ["RANK"]), "w").close()
time.sleep(float(os.environ.get("HOLD", "3")))
)PY";

// Rank 1 fails once every rank is up; the others would sleep for minutes.
constexpr const char* kFailScript = R"PY(import os, sys, time
d = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(d, "ready-" + os.environ["RANK"]), "w").close()
if os.environ["RANK"] == "1":
    while len([f for f in os.listdir(d) if f.startswith("ready-")]) < int(os.environ["WORLD_SIZE"]):
        time.sleep(0.1)
    print("rank 1 fails", flush=True)
    sys.exit(3)
time.sleep(300)
)PY";

// The first attempt leaves `ready-RANK` (its host in it) and sleeps; the
// second leaves `again-RANK`, waits for a `go` file, then says where it
// ran in a facts line.
constexpr const char* kSecondAttemptWaitsForGo = R"PY(import json, os, socket, time
d = os.path.dirname(os.path.abspath(__file__))
first = os.environ["TOPOLAUNCH_RESTART_COUNT"] == "0"
with open(os.path.join(d, ("ready-" if first else "again-") + os.environ["RANK"]), "w") as f:
    f.write(socket.gethostname())
if first:
    time.sleep(300)
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.1)
print("@facts " + json.dumps({"rank": int(os.environ["RANK"]), "host": socket.gethostname()}), flush=True)
)PY";

// Every worker's facts line in `out` (`run`'s labelled output), parsed; a
// line that is not JSON fails the test, named.
std::vector<json> WorkerFacts(const std::string& out) {
  std::vector<json> facts;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (size_t at = line.find(": @facts "); at != std::string::npos) {
      json f = json::parse(line.substr(at + 9), nullptr, false);
      EXPECT_TRUE(f.is_object()) << line;
      if (f.is_object()) facts.push_back(std::move(f));
    }
  return facts;
}

void SetEnv(ProcessSpec& spec, const std::string& name, const std::string& value) {
  for (auto& [key, v] : spec.env)
    if (key == name) return void(v = value);
  spec.env.emplace_back(name, value);
}

class RunSrun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = NetnsTestbed::Unavailable()) return void(skip_ = *why);
    for (const char* program : {kPython, "/usr/bin/torchrun", "/usr/bin/numactl"})
      if (access(program, X_OK) != 0) return void(error_ = fmt::format("{} is not installed (bash tests/install_deps.sh test)", program));
    if (std::string missing = SlurmCluster::Missing(); !missing.empty()) return void(error_ = missing);
    suite_dir_ = std::make_unique<TempDir>();
    WriteTopology();
    if (!skip_.empty() || !error_.empty()) return;
    auto testbed = NetnsTestbed::Start(kNodes);
    if (!testbed.ok()) return void(error_ = testbed.error().Message());
    testbed_ = std::move(testbed).value();
    // As GPU sites run Slurm: cgroups confine each step to its CPUs and
    // GPUs, where this machine has cgroup v1 (else said by the tests that
    // need it).
    cgroups_unavailable_ = SlurmCluster::CgroupsUnavailable();
    auto slurm = SlurmCluster::Start(*testbed_, cgroups_unavailable_.empty() ? SlurmCluster::Confinement::kCgroups
                                                                             : SlurmCluster::Confinement::kNone);
    if (!slurm.ok()) return void(error_ = slurm.error().Message());
    slurm_ = std::move(slurm).value();
    // As at a site: nodes reach the login node only on slurmctld's port and
    // SrunPortRange, where `run` listens for the agents too.
    if (Status walled = slurm_->FirewallTheHead(); !walled.ok()) return void(error_ = walled.error().Message());
  }
  static void TearDownTestSuite() {
    slurm_.reset();
    testbed_.reset();
    suite_dir_.reset();
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
    ASSERT_TRUE(slurm_) << "the test cluster did not come back after a node-loss test";
  }

  // Two leaves: node1 and node3 on the first, node2 (and node4, not in the
  // cluster) on the second.
  static void WriteTopology() {
    bool unavailable = false;
    std::string failed = WriteFourHostTopology(*suite_dir_, {"node1", "node3", "node2", "node4"}, Topo(), unavailable);
    (unavailable ? skip_ : error_) = failed;
  }
  static std::string Topo() { return suite_dir_->File("topo.json"); }

  // The plan's host order for the whole cluster.
  static std::vector<std::string> PlanOrder() {
    ProcessResult planned = RunTopolaunch({"plan", "--topology", Topo(), "--hosts", "node[1-3]", "--nproc-per-node", "1", "--json"});
    std::vector<std::string> order;
    EXPECT_EQ(planned.exit_code, 0) << planned.Describe();
    if (planned.exit_code != 0) return order;
    json plan = json::parse(planned.out);  // kept: a loop over a temporary's member would dangle
    for (const json& node : plan.at("nodes")) order.push_back(node.at("host"));
    return order;
  }

  // `run`'s options for the suite, then `extra`, the script and its arguments.
  std::vector<std::string> RunOptions(std::vector<std::string> extra, const std::string& script,
                                      std::vector<std::string> script_args = {}) const {
    std::vector<std::string> argv = {"--no-gpus", "--nproc-per-node", "1", "--topology", Topo(), "--torchrun", kTorchrun,
                                     "--python", kPython};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(script);
    argv.insert(argv.end(), script_args.begin(), script_args.end());
    return argv;
  }

  // `topolaunch run` with RunOptions.
  std::vector<std::string> RunArgs(std::vector<std::string> extra, const std::string& script,
                                   std::vector<std::string> script_args = {}) const {
    std::vector<std::string> argv = {TopolaunchBinary(), "run"};
    for (std::string& arg : RunOptions(std::move(extra), script, std::move(script_args))) argv.push_back(std::move(arg));
    return argv;
  }

  // ARGV on the login side, in this test's folder, with the secret in its
  // environment and HOME an empty folder (no SSH key).
  ProcessSpec LoginSide(std::vector<std::string> argv) const {
    ProcessSpec spec = slurm_->InHead(std::move(argv), {{"MY_TOKEN", kSecret}});
    std::filesystem::create_directories(dir_.File("home"));
    SetEnv(spec, "HOME", dir_.File("home"));
    spec.cwd = dir_.path();
    spec.timeout = seconds(120);
    return spec;
  }

  // `--env GPU_DEVICES=...`: every fake GPU of a node, for the facts script
  // to open.
  static std::vector<std::string> GpuDevicesEnv() {
    std::string devices;
    for (int g = 0; g < SlurmCluster::kGpusPerNode; ++g) devices += (g ? ":" : "") + slurm_->GpuDevice(g);
    return {"--env", "GPU_DEVICES=" + devices};
  }

  // `salloc -N nodes ARGV` on the login side.
  ProcessSpec Salloc(int nodes, std::vector<std::string> argv) const {
    std::vector<std::string> salloc = {"salloc", fmt::format("-N{}", nodes)};
    salloc.insert(salloc.end(), argv.begin(), argv.end());
    return LoginSide(std::move(salloc));
  }

  // The exit status of batch job `job` once it has ended (from `scontrol
  // show job`: no accounting here), -1 when it does not end within `limit`.
  // sbatch --wait would do, but it polls with a back-off of up to 32 s.
  int WaitForBatchJob(const std::string& job, milliseconds limit) const {
    int status = -1;
    WaitUntil(
        [&] {
          std::string info = slurm_->Client({"scontrol", "-o", "show", "job", job}).out;
          bool ended = info.find("JobState=RUNNING") == std::string::npos && info.find("JobState=PENDING") == std::string::npos &&
                       info.find("JobState=CONFIGURING") == std::string::npos && info.find("JobState=COMPLETING") == std::string::npos;
          size_t at = info.find(" ExitCode=");
          if (ended && at != std::string::npos) status = std::atoi(info.c_str() + at + 10);
          return ended && at != std::string::npos;
        },
        limit);
    return status;
  }

  // templates/slurm/sbatch-run.sh submitted with `run_args`, the audit
  // reading `sysfs`: its exit status once it ended; its output is batch.out.
  int SbatchTemplate(const FakeSysfs& sysfs, std::vector<std::string> run_args) const {
    // The template asks for eight GPUs a node; this cluster's nodes have four.
    std::vector<std::string> argv = {"sbatch",           "--parsable", fmt::format("-N{}", kNodes),
                                     "--gpus-per-node=4", "-o",        dir_.File("batch.out"),
                                     std::string(TOPOLAUNCH_SOURCE_DIR) + "/templates/slurm/sbatch-run.sh"};
    argv.insert(argv.end(), run_args.begin(), run_args.end());
    ProcessSpec spec = LoginSide(argv);
    spec.env.emplace_back("TOPOLAUNCH", TopolaunchBinary());
    spec.env.emplace_back("TOPOLAUNCH_AUDIT_ARGS", "--sysfs-root " + sysfs.root() + " --expect-gpus 4");
    ProcessResult submitted = RunProcess(spec);
    EXPECT_EQ(submitted.exit_code, 0) << submitted.Describe();
    return WaitForBatchJob(submitted.out.substr(0, submitted.out.find_first_of(";\n")), seconds(90));
  }

  // Starts `spec` and returns once every node's worker has left its marker,
  // or the job has ended, or 90 s have passed.
  std::future<ProcessResult> StartJob(const ProcessSpec& spec) const {
    std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
    WaitUntil([&] { return ReadyWorkers() == kNodes || run.wait_for(milliseconds(0)) == std::future_status::ready; },
              seconds(90));
    return run;
  }

  std::string WriteScript(const char* text) const {
    std::string path = dir_.File("job.py");
    std::ofstream(path) << text;
    return path;
  }

  size_t ReadyWorkers() const { return CountReadyMarkers(dir_.path()); }

  void ExpectNothingLeft(milliseconds limit) const { EXPECT_TRUE(NothingLeftWithin(*testbed_, dir_.path(), limit)); }

  static inline std::string skip_, error_, cgroups_unavailable_;
  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<NetnsTestbed> testbed_;
  static inline std::unique_ptr<SlurmCluster> slurm_;
  TempDir dir_;
};

// What Slurm variables a worker sees (one rank a node here): Slurm's task
// variables are torchrun's ranks (slurm_rank_env.h: the agent's task index
// and node count are not), nothing of the agent's task alone is left, and
// every other variable is on this list, each kept on purpose: the job's
// (its id, name, nodes, CPUs, where it was submitted), the node's, the
// step's (the agents' step, which the workers are in for accounting and
// cgroups), and how to reach srun and slurmctld.
void ExpectSlurmVariablesOfRanks(const std::map<int, json>& facts) {
  const std::set<std::string> kept = {
      // the job
      "SLURM_CLUSTER_NAME", "SLURM_CONF", "SLURM_JOBID", "SLURM_JOB_ID", "SLURM_JOB_NAME", "SLURM_JOB_NODELIST",
      "SLURM_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_CPUS_PER_NODE", "SLURM_TASKS_PER_NODE",
      "SLURM_JOB_PARTITION", "SLURM_JOB_UID", "SLURM_JOB_USER", "SLURM_JOB_GID", "SLURM_JOB_QOS", "SLURM_JOB_ACCOUNT",
      "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST", "SLURM_WORKING_CLUSTER", "SLURM_UMASK", "SLURM_PRIO_PROCESS",
      "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_CPUS_ON_NODE", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS",
      "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", "SLURM_NODE_ALIASES",
      // the node
      "SLURMD_NODENAME", "SLURM_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN",
      // the agents' step
      "SLURM_STEPID", "SLURM_STEP_ID", "SLURM_STEP_NODELIST", "SLURM_STEP_NUM_NODES", "SLURM_DISTRIBUTION",
      "SLURM_CPU_BIND_TYPE", "SLURM_LABELIO", "SLURM_UNBUFFEREDIO", "SLURM_KILL_BAD_EXIT", "SLURM_OVERLAP",
      "SLURM_EXPORT_ENV", "SLURM_MPI_TYPE",
      // reaching srun and slurmctld
      "SLURM_LAUNCH_NODE_IPADDR", "SLURM_SRUN_COMM_HOST", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
      // torchrun's ranks
      "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE",
      "SLURM_STEP_NUM_TASKS"};
  for (const auto& [rank, f] : facts) {
    SCOPED_TRACE(f.dump());
    const json& slurm = f.at("slurm");
    EXPECT_EQ(slurm.value("SLURM_PROCID", ""), std::to_string(rank));
    EXPECT_EQ(slurm.value("SLURM_LOCALID", ""), "0");
    EXPECT_EQ(slurm.value("SLURM_NODEID", ""), std::to_string(rank));  // one rank a node: the node rank
    EXPECT_EQ(slurm.value("SLURM_NTASKS", ""), std::to_string(facts.size()));
    EXPECT_EQ(slurm.value("SLURM_NTASKS_PER_NODE", ""), "1");
    for (const auto& [name, value] : slurm.items()) EXPECT_TRUE(kept.count(name)) << name << "=" << value << " reaches a worker";
  }
}

// The test bed's firewall holds: a listener on the login node is reached
// from a node inside SrunPortRange, and not outside it.
TEST_F(RunSrun, TheLoginNodesFirewallAdmitsNodesOnlyOnSlurmsPorts) {
  const char* listen = "import socket, sys, time\nfor p in sys.argv[1:]:\n    s = socket.socket(); s.bind(('', int(p))); s.listen(); globals()['k' + p] = s\nprint('up', flush=True)\ntime.sleep(20)\n";
  const char* reach = "import socket, sys\nfor p in sys.argv[2:]:\n    try:\n        socket.create_connection((sys.argv[1], int(p)), timeout=3).close(); print(p, 'open')\n    except OSError as e:\n        print(p, 'closed')\n";
  auto listener = BackgroundProcess::Start(testbed_->InHead({kPython, "-c", listen, "60150", "5999"}), dir_.File("listen.out"));
  ASSERT_TRUE(listener.ok()) << listener.error().Message();
  ASSERT_TRUE((*listener)->WaitForLog("up", seconds(10)).ok());
  ProcessResult r = RunProcess(testbed_->OnNode(2, {kPython, "-c", reach, testbed_->HeadAddress(), "60150", "5999"}));
  EXPECT_NE(r.out.find("60150 open"), std::string::npos) << r.Describe();
  EXPECT_NE(r.out.find("5999 closed"), std::string::npos) << r.Describe();
}

TEST_F(RunSrun, SallocRunsEveryWorkerAsAStepOfTheJobInPlanOrderWithoutSsh) {
  std::vector<std::string> order = PlanOrder();
  ASSERT_EQ(order.size(), static_cast<size_t>(kNodes));
  ASSERT_NE(fmt::format("{}", fmt::join(order, ",")), "node1,node2,node3") << "the fabric should reorder the nodes";
  const std::vector<std::string> args = {"a b", "it's", "$HOME", "a;b", "line1\nline2", "", "--help", "`id`", "-- "};
  std::string script = WriteScript(kFactsScript);
  ProcessSpec spec = Salloc(kNodes, RunArgs({"--env", "MY_TOKEN", "--env", "HOLD=4", "--env", "SHOW_SLURM=1"}, script, args));
  std::future<ProcessResult> run = StartJob(spec);
  EXPECT_EQ(ReadyWorkers(), static_cast<size_t>(kNodes)) << "not every worker started";
  std::vector<std::string> exposed = CommandLinesHolding(kSecret);
  EXPECT_TRUE(exposed.empty()) << "the secret is on a command line:\n" << fmt::format("{}", fmt::join(exposed, "\n"));
  ProcessResult r = run.get();
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000) << "\n" << Tail(slurm_->Logs(), 2000);
  EXPECT_NE(r.err.find("launcher: srun: inside Slurm job"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kSecret), std::string::npos);
  EXPECT_EQ(r.out.find(kSecret), std::string::npos);

  std::string hash = Sha256Hex(kSecret);
  std::map<int, json> facts;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (size_t at = line.find(": @facts "); at != std::string::npos) {
      json f = json::parse(line.substr(at + 9), nullptr, false);
      ASSERT_TRUE(f.is_object()) << line;
      facts[f.at("rank").get<int>()] = f;
    }
  ASSERT_EQ(facts.size(), static_cast<size_t>(kNodes)) << r.out;
  std::set<std::string> steps;
  for (int rank = 0; rank < kNodes; ++rank) {
    const json& f = facts[rank];
    SCOPED_TRACE(f.dump());
    EXPECT_EQ(f.at("host"), order[rank]);  // node rank = the plan's, not SLURM_NODEID
    ASSERT_TRUE(f.at("step").is_string()) << "the worker is not in a job step";
    steps.insert(f.at("step").get<std::string>());
    EXPECT_EQ(f.at("job"), facts[0].at("job"));
    EXPECT_EQ(f.at("argv").get<std::vector<std::string>>(), args);
    EXPECT_EQ(f.at("secret_sha256"), hash);
  }
  EXPECT_EQ(steps.size(), 1u) << "one step for every node";
  ExpectSlurmVariablesOfRanks(facts);
  EXPECT_NE(r.err.find(fmt::format("Granted job allocation {}", facts[0].at("job").get<std::string>())), std::string::npos)
      << r.err;
  ExpectNothingLeft(seconds(6));
}

TEST_F(RunSrun, AFailingRankEndsTheJobWithinTheStopGraceAndLeavesNothing) {
  std::string script = WriteScript(kFailScript);
  ProcessSpec spec = Salloc(kNodes, RunArgs({"--grace", "2"}, script));
  std::future<ProcessResult> run = StartJob(spec);
  ASSERT_EQ(ReadyWorkers(), static_cast<size_t>(kNodes)) << "not every worker started";
  Clock::time_point failed = Clock::now();
  ASSERT_EQ(run.wait_for(seconds(30)), std::future_status::ready) << "run did not end after rank 1 failed";
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - failed);
  ProcessResult r = run.get();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("exit code 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("first failure"), std::string::npos) << r.err;
  // torchrun's settle (5 s) plus the 2 s grace, and slack for two busy cores.
  EXPECT_LT(took, seconds(20)) << took.count() << " ms";
  ExpectNothingLeft(seconds(6));
}

// SIGTERM (what Ctrl-C's SIGINT and a time limit also mean) and SIGKILL to
// `run` itself: every step ends and no worker is left.
class RunSrunSignal : public RunSrun, public ::testing::WithParamInterface<int> {};

TEST_P(RunSrunSignal, SignallingRunEndsEveryStep) {
  std::string script = WriteScript(kFactsScript);
  ProcessSpec spec = Salloc(kNodes, RunArgs({"--env", "HOLD=300", "--grace", "1", "--heartbeat", "1"}, script));
  std::future<ProcessResult> run = StartJob(spec);
  ASSERT_EQ(ReadyWorkers(), static_cast<size_t>(kNodes)) << "not every worker started";
  std::optional<pid_t> pid = FindRunProcess(script);
  ASSERT_TRUE(pid) << "run not found";
  Clock::time_point sent = Clock::now();
  kill(*pid, GetParam());
  ExpectNothingLeft(seconds(8));
  EXPECT_LT(Clock::now() - sent, seconds(8));
  ASSERT_EQ(run.wait_for(seconds(30)), std::future_status::ready) << "salloc did not end";
  ProcessResult r = run.get();
  if (GetParam() == SIGTERM) {
    EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, RunSrunSignal, ::testing::Values(SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& info) { return info.param == SIGTERM ? "Term" : "Kill"; });

// srun itself killed (the OOM killer on the login node): Slurm keeps the
// step, and the agents stay connected to `run`. `run` sees srun gone,
// counts every node still connected as lost after a short wait and closes
// their connections, so each agent stops its workers.
TEST_F(RunSrun, AKilledSrunEndsEveryNodeAndTheJobFails) {
  std::string script = WriteScript(kFactsScript);
  ProcessSpec spec = Salloc(kNodes, RunArgs({"--env", "HOLD=300", "--grace", "1", "--heartbeat", "1"}, script));
  std::future<ProcessResult> run = StartJob(spec);
  ASSERT_EQ(ReadyWorkers(), static_cast<size_t>(kNodes)) << "not every worker started";
  // The srun this test's `run` started, and the helper srun forks with the
  // same command line: by parentage, as another test's srun, run beside
  // this one by `ctest -j`, has the same nodes on its command line.
  std::optional<pid_t> run_pid = FindRunProcess(script);
  ASSERT_TRUE(run_pid) << "run not found";
  std::optional<pid_t> srun;
  std::vector<pid_t> sruns;
  for (pid_t pid : AllPids())
    if (ParentPid(pid) == *run_pid && !Cmdline(pid).empty() && Cmdline(pid)[0].ends_with("srun")) srun = pid;
  ASSERT_TRUE(srun) << "the step's srun not found";
  for (pid_t pid : AllPids())
    if (pid == *srun || ParentPid(pid) == *srun) sruns.push_back(pid);
  kill(*srun, SIGKILL);
  ASSERT_EQ(run.wait_for(seconds(30)), std::future_status::ready) << "run did not end";
  ProcessResult r = run.get();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("first failure: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("connection lost"), std::string::npos) << r.err;
  ExpectNothingLeft(seconds(8));  // 3 s until the nodes count as lost, then a 1 s grace
  std::vector<pid_t> left;
  auto srun_left = [&] {
    left.clear();
    for (pid_t pid : sruns)
      if (!Cmdline(pid).empty()) left.push_back(pid);
    return left;
  };
  EXPECT_TRUE(WaitUntil([&] { return srun_left().empty(); }, seconds(8)))
      << "srun left on the login side: pid(s) " << fmt::format("{}", fmt::join(left, ", "));
}

// Another user on a compute node, while a launch waits for a slow agent
// (node3's topolaunch is a wrapper that waits 4 s): 300 silent connections
// to `run`'s port, then a partial hello held open. They push out only each
// other, every agent still gets in, and `run` spends little CPU on them
// (the hub spun on a partial hello: 1.8 s of CPU in 6 s).
constexpr const char* kFloodScript = R"PY(
import socket, sys, time
host, port, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
conns = []
for i in range(300):
    try:
        conns.append(socket.create_connection((host, port), timeout=2))
    except OSError:
        break
partial = socket.create_connection((host, port), timeout=2)
partial.sendall(b"@topolaunch-hel")
print("flooding", len(conns), flush=True)
time.sleep(hold)
)PY";

constexpr const char* kCpuScript = R"PY(
import resource, subprocess, sys
status = subprocess.run(sys.argv[1:]).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print("@cpu %.3f" % (used.ru_utime + used.ru_stime), file=sys.stderr)
sys.exit(status)
)PY";

TEST_F(RunSrun, AFloodAndAPartialHelloDuringTheLaunchKeepNoAgentOutAndCostRunLittleCpu) {
  std::string wrapper = dir_.File("slow-topolaunch"), flood = dir_.File("flood.py"), cpu = dir_.File("cpu.py");
  std::ofstream(wrapper) << fmt::format(
      "#!/bin/sh\nif [ \"$1\" = agent ] && [ \"$SLURMD_NODENAME\" = node3 ]; then sleep 4; fi\nexec {} \"$@\"\n",
      TopolaunchBinary());
  std::filesystem::permissions(wrapper, std::filesystem::perms(0755));
  std::ofstream(flood) << kFloodScript;
  std::ofstream(cpu) << kCpuScript;
  std::vector<std::string> argv = {kPython, cpu};
  for (std::string& arg : RunArgs({"--env", "HOLD=1", "--remote-topolaunch", wrapper}, WriteScript(kFactsScript)))
    argv.push_back(std::move(arg));
  ProcessSpec spec = Salloc(kNodes, argv);
  std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
  int port = 0;  // run's connect-back port, as another user on the login node sees it
  WaitUntil(
      [&] {
        std::istringstream lines(RunProcess(testbed_->InHead({"ss", "-Htlnp"})).out);
        for (std::string line; std::getline(lines, line);) {
          if (line.find("\"topolaunch\"") == std::string::npos) continue;
          std::istringstream words(line);
          std::string state, recv_q, send_q, local;
          words >> state >> recv_q >> send_q >> local;
          port = std::atoi(local.substr(local.rfind(':') + 1).c_str());
        }
        return port > 0 || run.wait_for(milliseconds(0)) == std::future_status::ready;
      },
      seconds(60));
  ASSERT_GT(port, 0) << "run's port never showed";
  EXPECT_TRUE(port >= 60001 && port <= 60200) << "run listens on " << port << ", outside SrunPortRange";
  ProcessResult flooded = RunProcess(testbed_->OnNode(2, {kPython, flood, testbed_->HeadAddress(), std::to_string(port), "6"}));
  ProcessResult r = run.get();
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  EXPECT_NE(flooded.out.find("flooding 300"), std::string::npos) << "the flood did not reach the port: " << flooded.Describe();
  size_t at = r.err.find("@cpu ");
  ASSERT_NE(at, std::string::npos) << r.err;
  double seconds_of_cpu = std::atof(r.err.c_str() + at + 5);
  EXPECT_LT(seconds_of_cpu, 1.5) << "CPU of run (and srun) through a launch under a flood";
  RecordProperty("run_cpu_seconds", fmt::format("{:.3f}", seconds_of_cpu));
  ExpectNothingLeft(seconds(6));
}

// How a worker's opening of each GPU of its node ended: "ENXIO" where its
// cgroup lets it through (the fake device has no driver), "EPERM" where
// ConstrainDevices keeps it out; a count of each.
std::map<std::string, int> DeviceOutcomes(const json& facts) {
  std::map<std::string, int> outcomes;
  for (const json& outcome : facts.at("devices")) ++outcomes[outcome.get<std::string>()];
  return outcomes;
}

// A job that asks for GPUs per task (two tasks a node, one GPU and one CPU
// each): the agents' step, one task a node, gets both GPUs of each node,
// not one (srun read SLURM_GPUS_PER_TASK=1 from the job's environment), and
// both CPUs (23.11 and later read SLURM_CPUS_PER_TASK=1). Under
// ConstrainDevices the workers can open the job's two GPUs of their node
// and not the other two.
TEST_F(RunSrun, PerTaskRequestsOfTheJobGiveTheStepEveryGpuOfItsNodes) {
  std::string script = WriteScript(kFactsScript);
  std::vector<std::string> argv = {"--ntasks-per-node=2", "--gpus-per-task=1", "-c", "1"};
  std::vector<std::string> extra = GpuDevicesEnv();
  extra.insert(extra.end(), {"--env", "HOLD=0"});
  for (std::string& arg : RunArgs(extra, script)) argv.push_back(std::move(arg));
  ProcessResult r = RunProcess(Salloc(kNodes, argv));
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  EXPECT_NE(r.err.find("SLURM_GPUS_PER_TASK=1"), std::string::npos) << "the note should name it: " << r.err;
  std::vector<json> facts = WorkerFacts(r.out);
  for (const json& f : facts) {
    EXPECT_EQ(f.at("gpus"), "0,1") << f.dump();
    if (!cgroups_unavailable_.empty()) continue;
    EXPECT_EQ(f.at("cpus"), json::array({0, 1})) << "a worker is narrower than its node's share: " << f.dump();
    EXPECT_EQ(DeviceOutcomes(f), (std::map<std::string, int>{{"ENXIO", 2}, {"EPERM", 2}})) << f.dump();
  }
  EXPECT_EQ(facts.size(), static_cast<size_t>(kNodes)) << r.out;
  if (!cgroups_unavailable_.empty()) GTEST_SKIP() << "GPUs were not confined: " << cgroups_unavailable_;
}

// `salloc -N3` holds one CPU a node, and under ConstrainCores the step's
// cpuset is that CPU; the worker's binding, planned from the whole node,
// is cut to it (numactl refuses CPUs outside the cpuset: "<0-1> is
// invalid"), and the node says so once.
TEST_F(RunSrun, AWorkerIsBoundWithinTheCpusItsJobHoldsOnTheNode) {
  if (!cgroups_unavailable_.empty()) GTEST_SKIP() << cgroups_unavailable_;
  std::string script = WriteScript(kFactsScript);
  ProcessResult r = RunProcess(Salloc(kNodes, RunArgs({"--env", "HOLD=0"}, script)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  std::vector<json> facts = WorkerFacts(r.out);
  for (const json& f : facts) EXPECT_EQ(f.at("cpus").size(), 1u) << "the job holds one CPU a node: " << f.dump();
  EXPECT_EQ(facts.size(), static_cast<size_t>(kNodes)) << r.out;
  std::string said = r.out + r.err;
  EXPECT_NE(said.find("this node's step may use CPUs "), std::string::npos) << said;
  EXPECT_NE(said.find("local rank(s) 0 bound to the part of their CPUs it allows"), std::string::npos) << said;
}

// `--exclusive` and no GPU asked for: the job holds every GPU of its nodes,
// but a step that asks for none gets none of them, and under
// ConstrainDevices its workers could open no GPU. The agents' step asks for
// the four each node holds, and says why.
TEST_F(RunSrun, AnExclusiveJobsStepReachesEveryGpuOfItsNodes) {
  if (!cgroups_unavailable_.empty()) GTEST_SKIP() << cgroups_unavailable_;
  std::string script = WriteScript(kFactsScript);
  std::vector<std::string> argv = {"--exclusive"};
  std::vector<std::string> extra = GpuDevicesEnv();
  extra.insert(extra.end(), {"--env", "HOLD=0"});
  for (std::string& arg : RunArgs(extra, script)) argv.push_back(std::move(arg));
  ProcessResult r = RunProcess(Salloc(kNodes, argv));
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  EXPECT_NE(r.err.find("--gres=gpu:4: the job holds GPUs it did not ask for"), std::string::npos) << r.err;
  std::vector<json> facts = WorkerFacts(r.out);
  for (const json& f : facts) {
    EXPECT_EQ(f.at("gpus"), "0,1,2,3") << f.dump();
    EXPECT_EQ(DeviceOutcomes(f), (std::map<std::string, int>{{"ENXIO", 4}})) << f.dump();
    EXPECT_EQ(f.at("cpus"), json::array({0, 1})) << f.dump();
  }
  EXPECT_EQ(facts.size(), static_cast<size_t>(kNodes)) << r.out;
}

// Node loss under Slurm, with and without `--no-kill`. A job of two nodes
// (node1 and node3: one leaf) with node2 its spare; node3 dies whole
// (slurmd, step daemon, agent, workers), `run` restarts on node1 and node2,
// and then slurmctld marks node3 down, as it does when a node misses
// SlurmdTimeout (300 s by default; here at once, by `scontrol update`).
// With --no-kill (the sbatch template's) the job goes on and the second
// attempt ends well; without it Slurm ends the job, spares or not.
class RunSrunNodeLoss : public RunSrun, public ::testing::WithParamInterface<bool> {
 protected:
  // node3 back for the next test, however this one ended, in a Slurm
  // started afresh: a node taken from a --no-kill job as it went down keeps
  // that job's CPUs in slurmctld's select/cons_tres (Slurm 22.05: sinfo
  // says "mixed" with nothing allocated, through `scontrol reconfigure`
  // and a restart from saved state), and later tests need whole nodes.
  struct RestoreNode3 {
    const RunSrunNodeLoss* test;
    ~RestoreNode3() {
      std::ofstream(test->dir_.File("go")).close();
      Status sshd = testbed_->RestartNode(3);
      EXPECT_TRUE(sshd.ok()) << sshd.error().Message();
      slurm_.reset();
      auto slurm = SlurmCluster::Start(*testbed_, cgroups_unavailable_.empty() ? SlurmCluster::Confinement::kCgroups
                                                                               : SlurmCluster::Confinement::kNone);
      if (slurm.ok()) slurm_ = std::move(slurm).value();
      else ADD_FAILURE() << slurm.error().Message();
    }
  };
};

TEST_P(RunSrunNodeLoss, ASpareReplacesALostNodeOnlyWhenTheJobHasNoKill) {
  bool no_kill = GetParam();
  std::string script = WriteScript(kSecondAttemptWaitsForGo);
  std::vector<std::string> argv;
  if (no_kill) argv.push_back("--no-kill");
  for (std::string& arg :
       RunArgs({"--nnodes", "2", "--max-restarts", "1", "--restart-delay", "0.5", "--grace", "1"}, script))
    argv.push_back(std::move(arg));
  ProcessSpec spec = Salloc(kNodes, argv);
  std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
  auto ended = [&] { return run.wait_for(milliseconds(0)) == std::future_status::ready; };
  RestoreNode3 restore{this};
  ASSERT_TRUE(WaitUntil([&] { return ReadyWorkers() == 2 || ended(); }, seconds(60))) << "the first attempt did not start";
  ASSERT_EQ(ReadFile(dir_.File("ready-1")), "node3") << "the plan was to run on node1 and node3";
  testbed_->StopNode(3);
  ASSERT_TRUE(WaitUntil([&] { return CountReadyMarkers(dir_.path(), "again-") == 2 || ended(); }, seconds(60)))
      << "no second attempt";
  ProcessResult down =
      slurm_->Client({"scontrol", "update", "nodename=node3", "state=down", "reason=topolaunch test: node lost"});
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  if (no_kill) {
    std::this_thread::sleep_for(seconds(3));  // Slurm's answer to the node failure, had it ended the job
    if (ended()) {
      ProcessResult early = run.get();
      FAIL() << "the job ended with node3 down: " << early.Describe() << "\n" << Tail(early.err, 6000);
    }
    std::ofstream(dir_.File("go")).close();
  }
  ASSERT_EQ(run.wait_for(seconds(60)), std::future_status::ready) << "salloc did not end";
  ProcessResult r = run.get();
  std::vector<json> facts = WorkerFacts(r.out);
  if (no_kill) {
    EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << Tail(r.err, 4000);
    EXPECT_NE(r.err.find("node3 lost: spare node2 takes its place"), std::string::npos) << r.err;
    std::map<int, std::string> hosts;
    for (const json& f : facts) hosts[f.at("rank").get<int>()] = f.at("host").get<std::string>();
    EXPECT_EQ(hosts, (std::map<int, std::string>{{0, "node1"}, {1, "node2"}})) << r.out;
  } else {
    EXPECT_NE(r.exit_code, 0) << "the job outlived its node's failure without --no-kill: " << r.Describe();
    EXPECT_TRUE(facts.empty()) << r.out;
  }
  ExpectNothingLeft(seconds(10));
}

INSTANTIATE_TEST_SUITE_P(NoKill, RunSrunNodeLoss, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "NoKill" : "Default"; });

// `srun -N3 topolaunch run ...`: three launches of the whole job, nine
// agents. Each task refuses at once, and nothing starts.
TEST_F(RunSrun, RunAsEveryTaskOfAStepIsRefusedAtOnceAndStartsNothing) {
  std::string script = WriteScript(kFactsScript);
  std::vector<std::string> argv = {"srun", "-N3", "-n3"};
  for (std::string& arg : RunArgs({}, script)) argv.push_back(std::move(arg));
  Clock::time_point start = Clock::now();
  ProcessResult r = RunProcess(Salloc(kNodes, argv));
  EXPECT_LT(Clock::now() - start, seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("this is one of 3 tasks of a Slurm step (SLURM_STEP_NUM_TASKS=3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("from the batch script or the salloc shell"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("preflight"), std::string::npos) << "a node was asked something: " << r.err;
  EXPECT_EQ(ReadyWorkers(), 0u);
}

// The job's environment as sites leave it: an MPI plugin named
// (MpiDefault=pmi2 or SLURM_MPI_TYPE) and `sbatch --export=NONE`'s
// SLURM_EXPORT_ENV. The agents' step takes neither: the workers see no PMI
// variables and the agents have the environment they need; the note says
// what was not passed on.
TEST_F(RunSrun, TheStepTakesNeitherTheJobsMpiPluginNorItsExportRule) {
  std::string script = WriteScript(kFactsScript);
  std::vector<std::string> argv = {"env", "SLURM_MPI_TYPE=pmi2", "SLURM_EXPORT_ENV=NONE"};
  for (std::string& arg : RunArgs({"--env", "HOLD=0"}, script)) argv.push_back(std::move(arg));
  ProcessResult r = RunProcess(Salloc(kNodes, argv));
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  EXPECT_NE(r.err.find("not passed on to it, the job's own per-task requests: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("SLURM_MPI_TYPE=pmi2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--mpi=none --cpu-bind=none --export=ALL"), std::string::npos) << r.err;
  std::vector<json> facts = WorkerFacts(r.out);
  for (const json& f : facts) EXPECT_TRUE(f.at("mpi_vars").empty()) << "a worker has the MPI plugin's variables: " << f.dump();
  EXPECT_EQ(facts.size(), static_cast<size_t>(kNodes)) << r.out;
  ExpectNothingLeft(seconds(6));
}

TEST_F(RunSrun, ScancelOfTheBatchJobLeavesNoWorker) {
  std::string script = WriteScript(kFactsScript);
  std::vector<std::string> argv = RunArgs({"--env", "HOLD=300"}, script);
  ProcessResult submitted =
      RunProcess(LoginSide({"sbatch", "--parsable", fmt::format("-N{}", kNodes), "-o", dir_.File("batch.out"), "--wrap", ShellJoin(argv)}));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.Describe();
  std::string job = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  bool ready = WaitUntil([&] { return ReadyWorkers() == kNodes; }, seconds(90));
  EXPECT_TRUE(ready) << "workers did not start: " << ReadFile(dir_.File("batch.out"));
  ProcessResult steps = slurm_->Client({"squeue", "-h", "-s", "-j", job, "-o", "%i"});
  EXPECT_EQ(std::count(steps.out.begin(), steps.out.end(), '\n'), 2) << steps.out;  // one step for the nodes and the batch step
  ProcessResult cancelled = slurm_->Client({"scancel", job});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.Describe();
  ExpectNothingLeft(seconds(10));  // KillWait=2
}

TEST_F(RunSrun, AHostOutsideTheAllocationIsRefusedBeforeAnythingStarts) {
  std::string script = WriteScript(kFactsScript);
  // The allocation named: Slurm may grant any two nodes (node[1,3] right
  // after another test's job), and the refusal names the one left out.
  std::vector<std::string> salloc = {"salloc", "-N2", "--nodelist=node[1-2]"};
  std::vector<std::string> run = RunArgs({"--hosts", "node[1-3]"}, script);
  salloc.insert(salloc.end(), run.begin(), run.end());
  ProcessResult r = RunProcess(LoginSide(std::move(salloc)));
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("not in Slurm job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node3"), std::string::npos) << r.err;
  EXPECT_EQ(ReadyWorkers(), 0u);
  ExpectNothingLeft(seconds(3));
}

TEST_F(RunSrun, LauncherSrunOutsideAnAllocationIsBadUsage) {
  std::string script = WriteScript(kFactsScript);
  ProcessResult r = RunProcess(LoginSide(RunArgs({"--launcher", "srun", "--hosts", "node[1-3]"}, script)));
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("SLURM_JOB_ID is not set"), std::string::npos) << r.err;
}

TEST_F(RunSrun, LauncherSshInsideTheAllocationStillGoesOverSsh) {
  std::string script = WriteScript(kFactsScript);
  ProcessSpec spec = Salloc(kNodes, RunArgs({"--launcher", "ssh", "--env", "HOLD=0"}, script));
  SetEnv(spec, "HOME", testbed_->ClientHome());  // the testbed's key and known_hosts
  ProcessResult r = RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("launcher: ssh (--launcher ssh)"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"step\": null"), std::string::npos) << "a worker over SSH is in no step: " << r.out;
}

// templates/slurm/sbatch-run.sh under `sbatch --wait`: every node audits
// itself (against a fake sysfs: no HCA here), then `run` starts the job.
TEST_F(RunSrun, TheSbatchTemplateAuditsEveryNodeThenRunsTheJob) {
  FakeSysfs healthy;
  HealthyNode(healthy);
  std::string script = WriteScript(kFactsScript);
  int status = SbatchTemplate(healthy, RunOptions({"--env", "HOLD=0"}, script));
  std::string out = ReadFile(dir_.File("batch.out"));
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("launcher: srun (--launcher srun)"), std::string::npos) << out;
  for (int rank = 0; rank < kNodes; ++rank)
    EXPECT_NE(out.find(fmt::format("@facts {{\"rank\": {},", rank)), std::string::npos) << out;
  EXPECT_NE(out.find("\"gpus\": \"0,1,2,3\""), std::string::npos) << "a worker without its node's four GPUs:\n" << out;
}

TEST_F(RunSrun, TheSbatchTemplateStartsNothingWhenANodeFailsItsAudit) {
  FakeSysfs sick;
  SickNode(sick);
  std::string script = WriteScript(kFactsScript);
  int status = SbatchTemplate(sick, RunOptions({}, script));
  std::string out = ReadFile(dir_.File("batch.out"));
  EXPECT_EQ(status, 4) << out;
  EXPECT_NE(out.find("0a:00.0"), std::string::npos) << "the findings should name the GPU:\n" << out;
  EXPECT_NE(out.find("nothing was started"), std::string::npos) << out;
  EXPECT_EQ(ReadyWorkers(), 0u);
}

// `plan --format slurm-hostfile` read by its real consumer: task i of
// `srun --distribution=arbitrary` runs on the file's line i.
TEST_F(RunSrun, TheSlurmHostfilePlanPlacesSrunTasksInPlanOrder) {
  std::string ranks = dir_.File("ranks");
  ProcessResult planned = RunTopolaunch({"plan", "--topology", Topo(), "--hosts", "node[1-3]", "--nproc-per-node", "2",
                                         "--format", "slurm-hostfile", "-o", ranks});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  std::vector<std::string> lines;
  std::istringstream in(ReadFile(ranks));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u);
  ASSERT_NE(lines.front() + lines.back(), "node1node3") << "the plan should not be the sorted order";
  // Set for srun alone: salloc would read it as its own node list.
  ProcessResult r =
      RunProcess(Salloc(kNodes, {"--ntasks-per-node=2", "env", "SLURM_HOSTFILE=" + ranks, "srun", "--distribution=arbitrary", "-n6", "--label", "hostname"}));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::map<int, std::string> placed;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (size_t colon = line.find(": "); colon != std::string::npos) placed[std::stoi(line.substr(0, colon))] = line.substr(colon + 2);
  ASSERT_EQ(placed.size(), lines.size()) << r.out;
  for (size_t task = 0; task < lines.size(); ++task) EXPECT_EQ(placed[static_cast<int>(task)], lines[task]) << "task " << task;
}

// `plan --format torchrun` read by its real consumer: each node's line
// started there (here by srun, one step per node), the ranks land where
// the plan said. Debian's torch 1.13 needs its two extra options.
TEST_F(RunSrun, TheTorchrunPlanLinesStartRanksWhereThePlanSaid) {
  std::vector<std::string> order = PlanOrder();
  ASSERT_EQ(order.size(), static_cast<size_t>(kNodes));
  ProcessResult planned = RunTopolaunch({"plan", "--topology", Topo(), "--hosts", "node[1-3]", "--nproc-per-node", "1",
                                         "--format", "torchrun", "--master-port", "29571", "-o", dir_.File("lines")});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  std::string script = WriteScript(kFactsScript);
  std::string starter = fmt::format(
      "while IFS=$'\\t' read -r host cmd; do cmd=${{cmd/\\'torchrun\\'/{}}}; "
      "srun -N1 -n1 -w \"$host\" --overlap bash -c \"$cmd {}\" & done < {}; wait",
      kTorchrun, ShellQuote(script), ShellQuote(dir_.File("lines")));
  ProcessSpec spec = Salloc(kNodes, {"bash", "-c", starter});
  SetEnv(spec, "HOLD", "0");
  ProcessResult r = RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\n" << r.out;
  std::map<int, std::string> hosts;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (size_t at = line.find("@facts "); at != std::string::npos) {
      json f = json::parse(line.substr(at + 7), nullptr, false);
      ASSERT_TRUE(f.is_object()) << line;
      hosts[f.at("rank").get<int>()] = f.at("host");
    }
  ASSERT_EQ(hosts.size(), static_cast<size_t>(kNodes)) << r.out << r.err;
  for (int rank = 0; rank < kNodes; ++rank) EXPECT_EQ(hosts[rank], order[rank]) << "rank " << rank;
}

// --nnodes 2 of three: the two hosts of one leaf run, the third is named idle.
TEST_F(RunSrun, NnodesChoosesByTheFabricAndNamesTheIdleHosts) {
  std::string script = WriteScript(kFactsScript);
  ProcessResult r = RunProcess(Salloc(kNodes, RunArgs({"--nnodes", "2", "--env", "HOLD=0"}, script)));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("--nnodes 2: 1 host(s) of the pool stay idle: node2"), std::string::npos) << r.err;
  std::set<std::string> used;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (size_t at = line.find(": @facts "); at != std::string::npos) used.insert(json::parse(line.substr(at + 9)).at("host"));
  EXPECT_EQ(used, (std::set<std::string>{"node1", "node3"})) << r.out;
}

}  // namespace
}  // namespace topolaunch::testing
