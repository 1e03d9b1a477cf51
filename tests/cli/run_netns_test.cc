// `topolaunch run` end to end: the real binary in the head namespace of a
// four-node NetnsTestbed (real sshds, agents, torchrun, Python workers),
// with a topology.json read by `discover --fabric live` from an ibsim
// fabric whose CAs carry the nodes' names. One job checks what a good run
// must deliver (plan order, all-reduce, CPU binding, byte-exact arguments,
// a secret that never shows in a command line); the others break something
// (a worker dies, Ctrl-C, `run` killed, a node down, an unknown host key,
// an unreachable host) and check the exit status, the message, and that no
// process of the job is left on any node.
//
// The failure jobs use a worker that only sleeps (no torch import, so the
// suite stays quick on two cores): nothing in it ends by itself, so every
// process that goes away was stopped by topolaunch.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_test_util.h"
#include "core/text_io.h"
#include "support/nvlink_racks.h"

namespace topolaunch::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kNodes = 4;
constexpr int kProcs = 2;
constexpr const char* kHosts = "node1,node3,node2,node4";  // node1 and node2 share a leaf
constexpr const char* kPython = "/usr/bin/python3";
// Debian's torch 1.13 on Python 3.11 crashes at start-up without these.
constexpr const char* kTorchrun = "/usr/bin/torchrun --redirects 9:0 --tee 9:0";
constexpr const char* kSecret = "s3cr3t-token-6f1d";

// Every worker: its facts as one JSON line, 2,000 plain print() lines, a
// marker file once it is past the all-reduce, then a few seconds of sleep
// (the /proc scan happens then). print() under PYTHONUNBUFFERED=1 (which
// `run` sets) writes the text and its newline apart: through torchrun's
// shared stdout two ranks' lines would mix; each rank's own connection to
// the agent keeps them whole.
constexpr const char* kAllReduceScript = R"PY(import hashlib, json, os, socket, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
x = torch.tensor([float(rank + 1)])
dist.all_reduce(x)
cpus = [l.split(":", 1)[1].strip() for l in open("/proc/self/status") if l.startswith("Cpus_allowed_list")][0]
secret = os.environ.get("MY_TOKEN")
result = json.dumps({"rank": rank, "env_rank": int(os.environ["RANK"]), "world": world,
    "local_rank": int(os.environ["LOCAL_RANK"]), "host": socket.gethostname(), "cpus": cpus, "sum": x.item(),
    "argv": sys.argv[1:], "secret_sha256": hashlib.sha256(secret.encode()).hexdigest() if secret else None})
print("@result " + result)
for i in range(2000):
    print("@line", rank, i, "x" * (i % 50))
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready-%d" % rank), "w").close()
time.sleep(4)
dist.barrier()
dist.destroy_process_group()
)PY";

constexpr const char* kSleepScript = R"PY(import os, time
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready-" + os.environ["RANK"]), "w").close()
print("rank", os.environ["RANK"], "sleeping", flush=True)
time.sleep(300)
)PY";

// Attempt 0 leaves its marker and sleeps; attempt 1 says where it runs and ends.
constexpr const char* kSecondAttemptRuns = R"PY(import json, os, socket, time
if os.environ["TOPOLAUNCH_RESTART_COUNT"] == "0":
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready-" + os.environ["RANK"]), "w").close()
    time.sleep(300)
print("@second " + json.dumps({"rank": int(os.environ["RANK"]), "host": socket.gethostname()}), flush=True)
)PY";

// Rank 0 of the first attempt takes the script away from the shared
// folder; every rank fails.
constexpr const char* kRemovesItselfAndFails = R"PY(import os, sys
if os.environ["RANK"] == "0" and os.environ["TOPOLAUNCH_RESTART_COUNT"] == "0":
    os.remove(os.path.abspath(__file__))
sys.exit(1)
)PY";

// The second attempt's hosts by rank, from its "@second" lines.
std::map<int, std::string> SecondAttemptHosts(const std::string& out) {
  std::map<int, std::string> hosts;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (size_t at = line.find(": @second "); at != std::string::npos) {
      json f = json::parse(line.substr(at + 10), nullptr, false);
      if (f.is_object()) hosts[f.at("rank").get<int>()] = f.at("host").get<std::string>();
    }
  return hosts;
}

class RunNetns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = NetnsTestbed::Unavailable()) return void(skip_ = *why);
    for (const char* program : {kPython, "/usr/bin/torchrun", "/usr/bin/numactl"})
      if (access(program, X_OK) != 0)
        return void(error_ = fmt::format("{} is not installed (bash tests/install_deps.sh test)", program));
    ProcessResult torch = RunProcess(ProcessSpec{{kPython, "-c", "import torch.distributed"}, {}, "", seconds(60)});
    if (torch.exit_code != 0) return void(error_ = "torch is not installed (python3-torch): " + Tail(torch.err, 200));
    suite_dir_ = std::make_unique<TempDir>();
    WriteTopology();
    if (!skip_.empty() || !error_.empty()) return;
    auto testbed = NetnsTestbed::Start(kNodes);
    if (!testbed.ok()) return void(error_ = testbed.error().Message());
    testbed_ = std::move(testbed).value();
  }
  static void TearDownTestSuite() {
    testbed_.reset();
    suite_dir_.reset();
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  // topology.json from the live (ibsim) fabric: two leaves, node1+node2 on
  // the first, node3+node4 on the second. Sets skip_ or error_ when it cannot.
  static void WriteTopology() {
    bool unavailable = false;
    std::string failed = WriteFourHostTopology(*suite_dir_, {"node1", "node2", "node3", "node4"}, Topo(), unavailable);
    (unavailable ? skip_ : error_) = failed;
  }

  static std::string Topo() { return suite_dir_->File("topo.json"); }

  // `topolaunch run` with the suite's fixed options, then `extra`, the script and its arguments.
  ProcessSpec RunSpec(int nproc, int port, std::vector<std::string> extra, const std::string& script,
                      std::vector<std::string> script_args = {}) const {
    std::vector<std::string> argv = {TopolaunchBinary(), "run", "--hosts", kHosts, "--nproc-per-node", std::to_string(nproc),
                                     "--no-gpus", "--topology", Topo(), "--torchrun", kTorchrun, "--python", kPython,
                                     "--master-port", std::to_string(port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(script);
    argv.insert(argv.end(), script_args.begin(), script_args.end());
    ProcessSpec spec = testbed_->InHead(argv, {{"MY_TOKEN", kSecret}});
    spec.timeout = seconds(180);
    return spec;
  }

  // A script in this test's own directory (its marker files land beside it).
  std::string WriteScript(const char* text) const {
    std::string path = dir_.File("job.py");
    std::ofstream(path) << text;
    return path;
  }

  size_t ReadyWorkers() const { return CountReadyMarkers(dir_.path()); }

  void ExpectNothingLeft(milliseconds limit) const { EXPECT_TRUE(NothingLeftWithin(*testbed_, dir_.path(), limit)); }

  // A Python worker of `script` on node `node`, found by its command line
  // (`bind` execs the interpreter, so it is the process torchrun watches).
  std::optional<pid_t> FindWorker(int node, const std::string& script) const {
    for (pid_t pid : testbed_->PidsInNode(node)) {
      std::vector<std::string> args = Cmdline(pid);
      if (args.size() >= 2 && args[0] == kPython && args[1] == script) return pid;
    }
    return std::nullopt;
  }

  // `run --nnodes 3 --max-restarts 1 ...` of kSecondAttemptRuns, returned once
  // the first attempt's three workers run (or it ended).
  std::future<ProcessResult> StartRestartingJob(int port, std::vector<std::string> extra, std::string& script) {
    script = WriteScript(kSecondAttemptRuns);
    extra.insert(extra.begin(), {"--nnodes", "3", "--max-restarts", "1", "--grace", "1"});
    ProcessSpec spec = RunSpec(1, port, extra, script);
    std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
    EXPECT_TRUE(WaitUntil([&] { return ReadyWorkers() == 3 || run.wait_for(milliseconds(0)) == std::future_status::ready; },
                          seconds(90)))
        << "workers did not start";
    return run;
  }

  // `topolaunch run`'s own PID (nsenter execs it).
  std::optional<pid_t> FindRun(const std::string& script) const { return FindRunProcess(script); }

  // `run`'s result, once it ended by itself within `limit`; else a failure,
  // and `run` is killed (so the test does not wait for RunProcess's limit).
  ProcessResult Finish(std::future<ProcessResult>& run, const std::string& script, milliseconds limit) const {
    if (run.wait_for(limit) != std::future_status::ready) {
      ADD_FAILURE() << "run did not end within " << limit.count() << " ms";
      if (std::optional<pid_t> pid = FindRun(script)) kill(*pid, SIGKILL);
    }
    return run.get();
  }

  // Starts a sleeping job on every node and waits until all its workers run.
  std::future<ProcessResult> StartSleepingJob(int port, std::string& script) {
    script = WriteScript(kSleepScript);
    ProcessSpec spec = RunSpec(1, port, {"--grace", "2"}, script);
    std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
    bool ready = WaitUntil([&] { return ReadyWorkers() == kNodes || run.wait_for(milliseconds(0)) == std::future_status::ready; },
                           seconds(90));
    EXPECT_TRUE(ready) << "workers did not start";
    return run;
  }

  static inline std::string skip_, error_;
  static inline std::unique_ptr<TempDir> suite_dir_;
  static inline std::unique_ptr<NetnsTestbed> testbed_;
  TempDir dir_;
};

struct PlannedHost {
  int node_rank = -1;
  int first_rank = -1;
};

TEST_F(RunNetns, RanksFollowThePlanAndEveryWorkerGetsItsBindingArgsAndSecret) {
  ProcessResult planned = RunTopolaunch({"plan", "--topology", Topo(), "--hosts", kHosts, "--nproc-per-node",
                                         std::to_string(kProcs), "--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.Describe();
  std::map<std::string, PlannedHost> plan;
  std::vector<std::string> plan_order;
  json plan_json = json::parse(planned.out);
  for (const json& node : plan_json.at("nodes")) {
    plan[node.at("host").get<std::string>()] = {node.at("node_rank").get<int>(), node.at("first_rank").get<int>()};
    plan_order.push_back(node.at("host").get<std::string>());
  }
  ASSERT_EQ(plan.size(), static_cast<size_t>(kNodes)) << planned.out;
  ASSERT_NE(fmt::format("{}", fmt::join(plan_order, ",")), kHosts) << "the plan should reorder the hosts";

  const std::vector<std::string> args = {"--lr",        "a b",  "it's",  "say \"hi\"", "$HOME",  "a;b", "line1\nline2", "",
                                         "--help",      "`id`", "*",     "back\\slash", "\t",     "-- ", "--"};
  std::string script = WriteScript(kAllReduceScript);
  ProcessSpec spec = RunSpec(kProcs, 29510, {"--env", "MY_TOKEN"}, script, args);
  std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
  // While every worker sleeps after its all-reduce: the secret is in no command line.
  bool ready = WaitUntil(
      [&] { return ReadyWorkers() == kNodes * kProcs || run.wait_for(milliseconds(0)) == std::future_status::ready; }, seconds(150));
  EXPECT_TRUE(ready) << "not every worker got past its all-reduce";
  std::vector<std::string> exposed = CommandLinesHolding(kSecret);
  EXPECT_TRUE(exposed.empty()) << "the secret is on a command line:\n" << fmt::format("{}", fmt::join(exposed, "\n"));
  ProcessResult r = run.get();
  ASSERT_EQ(r.exit_code, 0) << r.Describe() << "\nstdout: " << Tail(r.out, 3000);
  EXPECT_EQ(r.out.find(kSecret), std::string::npos);
  EXPECT_EQ(r.err.find(kSecret), std::string::npos);

  // Lines arrive as "HOST[NODE_RANK] RANK: @result {...}", then
  // "HOST[NODE_RANK] RANK: @line RANK I xxx": each whole, once, in order.
  std::string secret_hash = Sha256Hex(kSecret);
  std::set<int> ranks;
  std::map<std::string, std::set<std::string>> cpus_by_host;
  std::map<int, int> next_line;  // by rank
  int broken_lines = 0;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) {
    if (size_t at = line.find(": @line "); at != std::string::npos) {
      int label = -1, rank = -1, i = -1;
      std::string xs;
      size_t start = line.rfind(' ', at) + 1;  // the label: "HOST[NODE_RANK] RANK"
      std::istringstream fields(line.substr(start, at - start) + " " + line.substr(at + 8));
      fields >> label >> rank >> i >> xs;
      bool whole = label == rank && xs == std::string(static_cast<size_t>(i % 50), 'x') &&
                   line.ends_with(std::string(static_cast<size_t>(i % 50), 'x')) && next_line[rank] == i;
      if (!whole && ++broken_lines <= 5) ADD_FAILURE() << "a line broken, mislabelled, repeated or out of order: " << line;
      next_line[rank] = i + 1;
      continue;
    }
    size_t at = line.find(": @result ");
    if (at == std::string::npos) continue;
    std::string prefix = line.substr(0, at);
    SCOPED_TRACE(line);
    json result = json::parse(line.substr(at + 10), nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(result.is_object());
    std::string host = result.at("host");
    ASSERT_TRUE(plan.count(host)) << host;
    const PlannedHost& p = plan[host];
    int rank = result.at("rank");
    EXPECT_EQ(prefix, fmt::format("{}[{}] {}", host, p.node_rank, rank));
    EXPECT_EQ(rank, p.first_rank + result.at("local_rank").get<int>());
    EXPECT_EQ(result.at("env_rank"), rank);
    EXPECT_EQ(result.at("world"), kNodes * kProcs);
    EXPECT_EQ(result.at("sum"), kNodes * kProcs * (kNodes * kProcs + 1) / 2.0);
    EXPECT_EQ(result.at("argv").get<std::vector<std::string>>(), args);
    EXPECT_EQ(result.at("secret_sha256"), secret_hash);
    ranks.insert(rank);
    cpus_by_host[host].insert(result.at("cpus").get<std::string>());
  }
  EXPECT_EQ(ranks.size(), static_cast<size_t>(kNodes * kProcs)) << "stdout: " << Tail(r.out, 3000);
  EXPECT_EQ(broken_lines, 0);
  for (int rank = 0; rank < kNodes * kProcs; ++rank) EXPECT_EQ(next_line[rank], 2000) << "rank " << rank << "'s lines";
  if (std::thread::hardware_concurrency() >= 2) {
    for (const auto& [host, sets] : cpus_by_host) {
      EXPECT_EQ(sets.size(), static_cast<size_t>(kProcs))
          << host << "'s workers share their CPUs: " << fmt::format("{}", fmt::join(sets, " | "));
    }
  }
  ExpectNothingLeft(seconds(6));
}

TEST_F(RunNetns, AKilledWorkerFailsTheJobAndStopsEveryNode) {
  std::string script;
  std::future<ProcessResult> run = StartSleepingJob(29520, script);
  std::optional<pid_t> worker = FindWorker(2, script);
  EXPECT_TRUE(worker) << "no worker of " << script << " on node2";
  if (worker) kill(*worker, SIGKILL);
  ProcessResult r = Finish(run, script, seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("first failure: node2"), std::string::npos) << r.err;
  ExpectNothingLeft(seconds(6));
}

TEST_F(RunNetns, CtrlCStopsEveryNodeWithin5Seconds) {
  std::string script;
  std::future<ProcessResult> run = StartSleepingJob(29530, script);
  std::optional<pid_t> pid = FindRun(script);
  ASSERT_TRUE(pid);
  Clock::time_point sent = Clock::now();
  kill(*pid, SIGINT);
  ProcessResult r = Finish(run, script, seconds(30));
  EXPECT_EQ(r.exit_code, 130) << r.Describe();
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  ExpectNothingLeft(milliseconds(5000) - std::chrono::duration_cast<milliseconds>(Clock::now() - sent));
  EXPECT_LE(Clock::now() - sent, seconds(5));
}

TEST_F(RunNetns, KillingRunItselfStopsEveryNode) {
  std::string script;
  std::future<ProcessResult> run = StartSleepingJob(29540, script);
  std::optional<pid_t> pid = FindRun(script);
  ASSERT_TRUE(pid);
  kill(*pid, SIGKILL);
  ProcessResult r = run.get();
  EXPECT_EQ(r.term_signal, SIGKILL) << r.Describe();
  ExpectNothingLeft(seconds(6));
}

// The login node cut off from node2 (its link down: no FIN, no RST ever
// reaches it) and then `run` killed: the other agents see their channel
// close; node2's agent sees the heartbeats stop and stops its tree.
TEST_F(RunNetns, ACutNetworkStopsTheCutOffNodeByItsHeartbeat) {
  std::string script = WriteScript(kSleepScript);
  ProcessSpec spec = RunSpec(1, 29542, {"--grace", "1", "--heartbeat", "1"}, script);
  std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
  ASSERT_TRUE(WaitUntil([&] { return ReadyWorkers() == kNodes || run.wait_for(milliseconds(0)) == std::future_status::ready; },
                        seconds(90)))
      << "workers did not start";
  const std::vector<std::string> link = {"ip", "-n", testbed_->NodeNamespace(2), "link", "set", "eth0"};
  auto set_link = [&link](const char* state) {
    ProcessSpec ip;
    ip.argv = link;
    ip.argv.push_back(state);
    return RunProcess(ip);
  };
  ProcessResult down = set_link("down");
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  std::optional<pid_t> pid = FindRun(script);
  if (pid) kill(*pid, SIGKILL);
  run.get();
  EXPECT_TRUE(pid) << "run not found";
  ExpectNothingLeft(seconds(8));  // three missed 1 s heartbeats, then a 1 s grace
  ProcessResult up = set_link("up");
  EXPECT_EQ(up.exit_code, 0) << up.Describe();
}

TEST_F(RunNetns, ANodeDyingMidRunStopsTheOthersAndIsNamed) {
  std::string script;
  std::future<ProcessResult> run = StartSleepingJob(29545, script);
  testbed_->StopNode(3);  // sshd, agent, torchrun, workers: the whole node at once
  ProcessResult r = Finish(run, script, seconds(30));
  Status restarted = testbed_->RestartNode(3);
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("first failure: node3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("connection lost"), std::string::npos) << r.err;
  ExpectNothingLeft(seconds(6));
  ASSERT_TRUE(restarted.ok()) << restarted.error().Message();
}

TEST_F(RunNetns, ANodeWithoutSshdFailsThePreflightAndNothingStarts) {
  testbed_->StopNode(3);
  std::string script = WriteScript(kSleepScript);
  ProcessResult r = RunProcess(RunSpec(1, 29550, {}, script));
  Status restarted = testbed_->RestartNode(3);
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("node3:"), std::string::npos) << r.err;
  for (const char* up : {"node1:", "node2:", "node4:"}) EXPECT_EQ(r.err.find(up), std::string::npos) << r.err;
  EXPECT_EQ(ReadyWorkers(), 0u);
  ExpectNothingLeft(seconds(6));
  ASSERT_TRUE(restarted.ok()) << restarted.error().Message();
}

TEST_F(RunNetns, AnUnknownHostKeyFailsThePreflightAndSaysHowToAccept) {
  std::string known;
  std::istringstream in(ReadFile(testbed_->KnownHosts()));
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("node2,")) known += line + "\n";
  std::ofstream(dir_.File("known_hosts")) << known;
  ProcessResult r = RunProcess(RunSpec(1, 29560, {"--known-hosts", dir_.File("known_hosts")}, WriteScript(kSleepScript)));
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("node2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--accept-new-host-keys"), std::string::npos) << r.err;
  EXPECT_EQ(ReadyWorkers(), 0u);
  ExpectNothingLeft(seconds(6));
}

TEST_F(RunNetns, AnUnreachableHostFailsThePreflightWithinTheConnectTimeout) {
  std::string config = testbed_->SshConfigText();
  config.replace(config.find(testbed_->NodeAddress(4)), testbed_->NodeAddress(4).size(), testbed_->SilentAddress());
  std::ofstream(dir_.File("ssh_config")) << config;
  ProcessResult r = RunProcess(RunSpec(1, 29570, {"--ssh-config", dir_.File("ssh_config"), "--connect-timeout", "2"},
                                       WriteScript(kSleepScript)));
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("node4:"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 15) << r.Describe();
  EXPECT_EQ(ReadyWorkers(), 0u);
  ExpectNothingLeft(seconds(6));
}

// The nodes are reached through ~/.ssh/config aliases: the default master
// address is the first node's HostName (what the nodes can reach), and a
// master address a node cannot resolve fails the preflight, nothing started.
TEST_F(RunNetns, TheMasterAddressIsOneEveryNodeResolves) {
  std::string script = WriteScript(kSleepScript);
  ProcessResult dry = RunProcess(RunSpec(1, 29580, {"--dry-run"}, script));
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  size_t at = dry.out.find("# node rank 0: ");
  ASSERT_NE(at, std::string::npos) << dry.out;
  std::string first = dry.out.substr(at + 15, dry.out.find(' ', at + 15) - at - 15);
  std::string address;
  for (int i = 1; i <= kNodes; ++i)
    if (testbed_->NodeName(i) == first) address = testbed_->NodeAddress(i);
  ASSERT_FALSE(address.empty()) << first;
  EXPECT_NE(dry.out.find("'--master_addr=" + address + "'"), std::string::npos) << dry.out;

  ProcessResult bad = RunProcess(RunSpec(1, 29581, {"--master-addr", "no-such-host.invalid"}, script));
  EXPECT_EQ(bad.exit_code, 3) << bad.Describe();
  EXPECT_NE(bad.err.find("cannot resolve the master address no-such-host.invalid"), std::string::npos) << bad.err;
  EXPECT_EQ(ReadyWorkers(), 0u);
  ExpectNothingLeft(seconds(6));
}

// NVLink domains in the topology's layouts decide the order under `run` as
// under `plan`: racks {node1, node3} and {node2, node4}, each cabled across
// both leaves, come out whole, where the leaf order alone would interleave
// them (node1 node2 | node3 node4).
TEST_F(RunNetns, RunKeepsEachNvlinkDomainTogether) {
  Result<std::string> text = ReadTextFile(Topo());
  ASSERT_TRUE(text.ok()) << text.error().Message();
  Result<Topology> topology = ParseTopologyJson(*text, Topo());
  ASSERT_TRUE(topology.ok()) << topology.error().Message();
  PutInRacks(*topology, {{"node1", 0}, {"node3", 0}, {"node2", 1}, {"node4", 1}});
  std::string racks = dir_.File("racks.json");
  std::ofstream(racks) << FormatTopologyJson(*topology);
  std::string script = WriteScript(kSleepScript);
  ProcessSpec spec = testbed_->InHead({TopolaunchBinary(), "run", "--hosts", kHosts, "--nproc-per-node", "1", "--no-gpus",
                                       "--topology", racks, "--torchrun", kTorchrun, "--python", kPython,
                                       "--master-port", "29582", "--dry-run", script},
                                      {});
  spec.timeout = seconds(120);
  ProcessResult dry = RunProcess(spec);
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  std::vector<std::string> order;
  for (size_t at = dry.out.find("# node rank "); at != std::string::npos; at = dry.out.find("# node rank ", at + 1)) {
    size_t host = dry.out.find(": ", at) + 2;
    order.push_back(dry.out.substr(host, dry.out.find(' ', host) - host));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"node1", "node3", "node4", "node2"})) << dry.out;
  EXPECT_EQ(ReadyWorkers(), 0u);
}

// --max-restarts with a pool of four and --nnodes 3: node1 and node2 on one
// leaf, node3 with the spare node4 on the other. node3 dies once every
// worker runs: every node is stopped, node4 takes node3's place (its leaf),
// and the second attempt runs on node1, node2, node4 in plan order, at the
// ring's lower bound, and succeeds; node3 is written to --failed-hosts.
TEST_F(RunNetns, ALostNodeIsReplacedByTheSpareOnItsLeaf) {
  std::string script;
  std::future<ProcessResult> run =
      StartRestartingJob(29584, {"--restart-delay", "0.5", "--failed-hosts", dir_.File("lost.txt")}, script);
  testbed_->StopNode(3);  // sshd, agent, torchrun, workers: the whole node at once
  ProcessResult r = Finish(run, script, seconds(90));
  Status restarted = testbed_->RestartNode(3);
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << Tail(r.err, 4000);
  EXPECT_NE(r.err.find("spares for --max-restarts 1: node4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node3 lost: spare node4 takes its place"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("attempts: 2"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir_.File("lost.txt")), "node3\n");
  EXPECT_EQ(SecondAttemptHosts(r.out), (std::map<int, std::string>{{0, "node1"}, {1, "node2"}, {2, "node4"}})) << r.out;
  ExpectNothingLeft(seconds(6));
  ASSERT_TRUE(restarted.ok()) << restarted.error().Message();
}

// The same with the network of node3 cut (nothing closes): `run` misses
// node3's answers for three heartbeats (SSH keepalives, TCP user timeout)
// and counts it as lost, node4 takes its place, and node3's agent, missing
// `run`'s heartbeats, stops its own processes.
TEST_F(RunNetns, ACutNodeIsReplacedAndItsProcessesStopByThemselves) {
  std::string script;
  std::future<ProcessResult> run = StartRestartingJob(29586, {"--restart-delay", "1", "--heartbeat", "1"}, script);
  auto set_link = [&](const char* state) {
    ProcessSpec ip;
    ip.argv = {"ip", "-n", testbed_->NodeNamespace(3), "link", "set", "eth0", state};
    return RunProcess(ip);
  };
  Clock::time_point cut = Clock::now();
  ProcessResult down = set_link("down");
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  // node3's own processes stop by its agent's missed heartbeats, while its link is still down.
  EXPECT_TRUE(WaitUntil([&] { return !FindWorker(3, script).has_value(); }, seconds(10))) << "node3's worker still runs";
  ProcessResult r = Finish(run, script, seconds(90));
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - cut);
  ProcessResult up = set_link("up");
  EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << Tail(r.err, 4000);
  EXPECT_NE(r.err.find("node(s) lost: node3 (connection lost)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node3 lost: spare node4 takes its place"), std::string::npos) << r.err;
  EXPECT_EQ(SecondAttemptHosts(r.out), (std::map<int, std::string>{{0, "node1"}, {1, "node2"}, {2, "node4"}})) << r.out;
  EXPECT_LT(took, seconds(60)) << took.count() << " ms from the cut to the end of the second attempt";
  ExpectNothingLeft(seconds(6));
  EXPECT_EQ(up.exit_code, 0) << up.Describe();
}

// A restart whose preflight every node fails (the script is gone
// from the shared folder) is the job's failure, not the nodes': no node is
// dropped or written to --failed-hosts, no spare is tried, and the job ends
// with 1, the reason named.
TEST_F(RunNetns, ARestartEveryNodeFailsDropsNoNode) {
  std::string script = WriteScript(kRemovesItselfAndFails);
  ProcessSpec spec = testbed_->InHead({TopolaunchBinary(), "run", "--hosts", kHosts, "--nnodes", "3", "--nproc-per-node",
                                       "1", "--no-gpus", "--topology", Topo(), "--torchrun", kTorchrun, "--python", kPython,
                                       "--master-port", "29592", "--max-restarts", "2", "--restart-delay", "0", "--grace",
                                       "1", "--failed-hosts", dir_.File("lost.txt"), script});
  spec.timeout = seconds(120);
  ProcessResult r = RunProcess(spec);
  EXPECT_EQ(r.exit_code, 1) << r.Describe() << "\n" << Tail(r.err, 3000);
  EXPECT_NE(r.err.find("preflight of restart 1: 3 of 3 node(s) not ready; nothing was started (every node: the fault is "
                       "the job's, no node is dropped)"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("takes its place"), std::string::npos) << "no spare for a job's own failure: " << r.err;
  EXPECT_EQ(ReadFile(dir_.File("lost.txt")), "");
  ExpectNothingLeft(seconds(6));
}

// No spare in the pool: the lost node fails the job, named, unless
// --min-nnodes lets it go on with fewer (the second attempt then runs on
// the two nodes left and succeeds).
TEST_F(RunNetns, WithNoSpareALostNodeFailsTheJobUnlessMinNnodesAllowsFewer) {
  for (bool fewer : {false, true}) {
    SCOPED_TRACE(fewer ? "--min-nnodes 2" : "no --min-nnodes");
    std::string script = WriteScript(kSecondAttemptRuns);
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
      if (entry.path().filename().string().starts_with("ready-")) std::filesystem::remove(entry.path());
    std::vector<std::string> argv = {TopolaunchBinary(), "run", "--hosts", "node1,node2,node3", "--nproc-per-node", "1",
                                     "--no-gpus", "--topology", Topo(), "--torchrun", kTorchrun, "--python", kPython,
                                     "--master-port", fewer ? "29590" : "29588", "--max-restarts", "1",
                                     "--restart-delay", "0", "--grace", "1"};
    if (fewer) argv.insert(argv.end(), {"--min-nnodes", "2"});
    argv.push_back(script);
    ProcessSpec spec = testbed_->InHead(argv);
    spec.timeout = seconds(180);
    std::future<ProcessResult> run = std::async(std::launch::async, [spec] { return RunProcess(spec); });
    ASSERT_TRUE(WaitUntil([&] { return ReadyWorkers() == 3 || run.wait_for(milliseconds(0)) == std::future_status::ready; },
                          seconds(90)))
        << "workers did not start";
    testbed_->StopNode(3);
    ProcessResult r = Finish(run, script, seconds(90));
    Status restarted = testbed_->RestartNode(3);
    if (fewer) {
      EXPECT_EQ(r.exit_code, 0) << r.Describe() << "\n" << Tail(r.err, 3000);
      EXPECT_NE(r.err.find("node3 lost and no spare left: going on with 2 node(s) (--min-nnodes 2)"), std::string::npos) << r.err;
      EXPECT_EQ(SecondAttemptHosts(r.out), (std::map<int, std::string>{{0, "node1"}, {1, "node2"}})) << r.out;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.Describe();
      EXPECT_NE(r.err.find("node3 lost and no spare left in the pool; --min-nnodes K lets the job go on with fewer nodes"),
                std::string::npos) << r.err;
      EXPECT_NE(r.err.find("attempts: 1"), std::string::npos) << r.err;
    }
    ExpectNothingLeft(seconds(6));
    ASSERT_TRUE(restarted.ok()) << restarted.error().Message();
  }
}

// A second NIC on each node, on its own subnet: a veth pair inside the
// node's namespace, eth1 with 10.201.0.K/24 (veths report the same speed as
// eth0). Removed again when it goes, whatever the test did.
class SecondNic {
 public:
  explicit SecondNic(const NetnsTestbed& testbed) : testbed_(testbed) {}
  ~SecondNic() {
    for (int node : added_) (void)Ip(node, {"link", "del", "eth1"});
  }
  ProcessResult Add(int node) {
    ProcessResult made = Ip(node, {"link", "add", "eth1", "type", "veth", "peer", "name", "eth1p"});
    if (made.exit_code != 0) return made;
    added_.push_back(node);
    for (std::vector<std::string> step : {std::vector<std::string>{"addr", "add", fmt::format("10.201.0.{}/24", node), "dev", "eth1"},
                                          {"link", "set", "eth1p", "up"}, {"link", "set", "eth1", "up"}})
      if (ProcessResult r = Ip(node, step); r.exit_code != 0) return r;
    return made;
  }

 private:
  ProcessResult Ip(int node, std::vector<std::string> args) const {
    ProcessSpec ip;
    ip.argv = {"ip", "-n", testbed_.NodeNamespace(node)};
    ip.argv.insert(ip.argv.end(), args.begin(), args.end());
    return RunProcess(ip);
  }
  const NetnsTestbed& testbed_;
  std::vector<int> added_;
};

// On TCP the socket transport stripes over every interface NCCL_SOCKET_IFNAME
// lists: `run` lists a second NIC only once every node has one on that subnet.
TEST_F(RunNetns, OnTcpEveryNodeStripesOverTheSubnetsAllNodesHave) {
  std::string script = WriteScript(kSleepScript);
  SecondNic nics(*testbed_);
  for (int node = 1; node < kNodes; ++node) ASSERT_EQ(nics.Add(node).exit_code, 0) << "node " << node;
  auto ifnames = [&](int port) {
    ProcessResult dry = RunProcess(RunSpec(1, port, {"--dry-run", "--profile", "tcp"}, script));
    EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
    EXPECT_EQ(dry.out.find("NCCL_TOPO_FILE"), std::string::npos) << "run leaves the PCI tree to NCCL";
    std::vector<std::string> values;
    for (size_t at = dry.out.find("export NCCL_SOCKET_IFNAME="); at != std::string::npos;
         at = dry.out.find("export NCCL_SOCKET_IFNAME=", at + 1))
      values.push_back(dry.out.substr(at + 26, dry.out.find('\n', at) - at - 26));
    return values;
  };
  // Node 4 has no second NIC: nobody stripes, every node stays on eth0.
  EXPECT_EQ(ifnames(29590), std::vector<std::string>(kNodes, "'=eth0'"));
  ASSERT_EQ(nics.Add(kNodes).exit_code, 0);
  EXPECT_EQ(ifnames(29591), std::vector<std::string>(kNodes, "'=eth0,eth1'"));
  EXPECT_EQ(ReadyWorkers(), 0u);
}

}  // namespace
}  // namespace topolaunch::testing
