// Preflight messages (round trips, errors by JSON path) and the judgement
// of a node's reply, one sentence per problem.
#include "launch/preflight.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

HostLayout SampleLayout() {
  HostLayout l;
  l.hostname = "gpu01";
  l.source = "hwloc-live";
  l.architecture = "x86_64";
  l.packages = 2;
  l.cores = 8;
  l.pus = 16;
  l.numa_nodes = {{0, 0, {0, 1, 2, 3, 8, 9, 10, 11}, 1ull << 34}, {1, 1, {4, 5, 6, 7, 12, 13, 14, 15}, 1ull << 34}};
  l.gpus = {{"0000:07:00.0", "nvidia", "H100", {"cuda0", "nvml0"}, 0, PcieLink{31.5}, {"0000:87:00.0"}},
            {"0000:87:00.0", "nvidia", "H100", {"cuda1"}, 1, std::nullopt, {"0000:07:00.0"}}};
  l.nics = {{"mlx5_0", "openfabrics", "0000:08:00.0", {"ib0"}, 0x0002c90300a1b2c3ull, 0, PcieLink{24.6}}};
  l.gpu_nic_paths = {{"0000:07:00.0", "mlx5_0", PcieRelation::kSamePcieSwitch},
                     {"0000:87:00.0", "mlx5_0", PcieRelation::kAcrossSockets}};
  l.nvml = NvmlFacts{"ok", "550.54"};
  return l;
}

PreflightReply FullReply() {
  PreflightReply r;
  r.hostname = "gpu01";
  r.boot_id = "5f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f";
  r.interpreter = "/opt/venv/bin/python3";
  r.interpreter_problem = "x: \"q\"";
  r.unix_time_ms = 1'717'000'000'123;
  r.programs = {{"torchrun", "/opt/venv/bin/torchrun"}, {"no such", ""}, {"./x \"q\"", ""}};
  r.port_free = false;
  r.port_problem = "in use";
  r.gpus = 2;
  r.layout = SampleLayout();
  r.rdma_ports = std::vector<RdmaPort>{
      {"mlx5_0", 1, "InfiniBand", "ACTIVE", {{0, "fe80:0000:0000:0000:0002:c903:00a1:b2c3", "IB/RoCE v1", ""}}},
      {"mlx5_1", 1, "Ethernet", "DOWN",
       {{0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", "ens1f0"},
        {3, "0000:0000:0000:0000:0000:ffff:0a00:0005", "RoCE v2", "ens1f0"}}}};
  r.socket_route = SocketRoute{"ens1f0", "route to 10.0.0.1 (node1) via ens1f0"};
  r.socket_interfaces = {{"ens1f0", "10.0.0.5/16", 100000}, {"tun0", "10.8.0.2/24", std::nullopt}};
  return r;
}

PreflightReply MinimalReply() {
  PreflightReply r;
  r.hostname = "n";
  r.unix_time_ms = 1;
  r.layout_problem = "hwloc: topology load failed";
  r.socket_route_problem = "no-such: does not resolve";
  r.cwd_problem = "/srv/job: No such file or directory";
  r.file_problems = {"/srv/a b.py: Permission denied", "x.py: a folder, not a script"};
  return r;
}

PreflightRequest WithFolderAndFiles() {
  PreflightRequest request{{"torchrun"}, 29500, "node1", true, "", {}, ""};
  request.cwd = "/srv/my job";
  request.files = {"train.py", "/abs/eval.py"};
  request.interpreter_of = "/opt/venv/bin/torchrun";
  return request;
}

PreflightRequest WithAudit() {
  PreflightRequest request = WithFolderAndFiles();
  request.audit = true;
  request.sysfs_root = "/tmp/fake sys";
  return request;
}

class PreflightRequestRoundTrip : public ::testing::TestWithParam<PreflightRequest> {};

TEST_P(PreflightRequestRoundTrip, ParsesWhatItFormats) {
  std::string line = FormatPreflightRequest(GetParam());
  ASSERT_EQ(line.find('\n'), line.size() - 1) << "one line, ending in a newline";
  EXPECT_TRUE(IsPreflightRequest(line));
  Result<PreflightRequest> parsed = ParsePreflightRequest(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(*parsed, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Table, PreflightRequestRoundTrip,
                         ::testing::Values(PreflightRequest{},
                                           PreflightRequest{{"torchrun", "/usr/bin/python3", "a b\n\"c\""}, 29500, "node1", true, "", {}, ""},
                                           PreflightRequest{{}, 0, "10.0.0.1", false, "", {}, ""},
                                           PreflightRequest{{"x"}, 65535, "", true, "", {}, ""}, WithFolderAndFiles(),
                                           WithAudit()));

class PreflightReplyRoundTrip : public ::testing::TestWithParam<PreflightReply> {};

TEST_P(PreflightReplyRoundTrip, ParsesWhatItFormats) {
  std::string line = FormatPreflightReply(GetParam());
  ASSERT_EQ(line.find('\n'), line.size() - 1) << "one line, ending in a newline";
  EXPECT_TRUE(IsPreflightReply(line));
  EXPECT_FALSE(IsPreflightRequest(line));
  Result<PreflightReply> parsed = ParsePreflightReply(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(*parsed, GetParam());
  // As the executor delivers it: without the newline.
  Result<PreflightReply> bare = ParsePreflightReply(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(bare.ok()) << bare.error().Message();
  EXPECT_EQ(*bare, GetParam());
}

PreflightReply PortFreeNoRdmaDevices() {
  PreflightReply r = MinimalReply();
  r.port_free = true;
  r.rdma_ports = std::vector<RdmaPort>{};  // read, and empty: differs from nullopt
  return r;
}

PreflightReply WithAuditErrors(std::vector<std::string> errors) {
  PreflightReply r = MinimalReply();
  r.audit_errors = std::move(errors);
  return r;
}

INSTANTIATE_TEST_SUITE_P(Table, PreflightReplyRoundTrip,
                         ::testing::Values(PreflightReply{}, MinimalReply(), FullReply(), PortFreeNoRdmaDevices(),
                                           WithAuditErrors({}),
                                           WithAuditErrors({"gpu_pcie_link: GPU 0000:0a:00.0 at x8, its slot x16"})));

// --audit: each error finding of the node checks is a problem of its own;
// an agent that did not run them (an older one) is not taken as healthy.
TEST(Preflight, TheNodeChecksJudgeTheNodeWhenAsked) {
  PreflightReply r;
  r.hostname = "gpu01";
  r.programs = {{"torchrun", "/usr/bin/torchrun"}};
  r.port_free = true;
  r.gpus = 8;
  r.unix_time_ms = 1'717'000'000'000;
  PreflightExpectations e;
  e.nproc_per_node = 8;
  EXPECT_TRUE(JudgePreflight("gpu01", r, {r.unix_time_ms, r.unix_time_ms}, e).empty());
  e.audit = true;
  EXPECT_EQ(JudgePreflight("gpu01", r, {r.unix_time_ms, r.unix_time_ms}, e),
            std::vector<std::string>{"did not run the node checks (an older topolaunch agent?)"});
  r.audit_errors = std::vector<std::string>{};
  EXPECT_TRUE(JudgePreflight("gpu01", r, {r.unix_time_ms, r.unix_time_ms}, e).empty());
  r.audit_errors = std::vector<std::string>{"port_state: mlx5_2 port 1 is Init", "numa_memory: NUMA node 1 has CPUs but no memory"};
  EXPECT_EQ(JudgePreflight("gpu01", r, {r.unix_time_ms, r.unix_time_ms}, e),
            (std::vector<std::string>{"audit: port_state: mlx5_2 port 1 is Init",
                                      "audit: numa_memory: NUMA node 1 has CPUs but no memory"}));
  // A hostile reply cannot make the list grow without bound.
  PreflightReply many = r;
  many.audit_errors = std::vector<std::string>(1000, "x: y");
  Result<PreflightReply> parsed = ParsePreflightReply(FormatPreflightReply(many));
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(parsed->audit_errors->size(), kMaxAuditErrors);
}

TEST(Preflight, TellsRequestsFromLaunchMessagesAndReplies) {
  EXPECT_TRUE(IsPreflightRequest(R"({"preflight":{}})"));
  EXPECT_TRUE(IsPreflightRequest(R"({"preflight":5})")) << "a request, if a bad one: Parse reports it";
  EXPECT_FALSE(IsPreflightRequest(R"({"argv":["preflight"]})"));
  EXPECT_FALSE(IsPreflightRequest(R"(["preflight"])"));
  EXPECT_FALSE(IsPreflightRequest("{\"preflight\":"));
  EXPECT_FALSE(IsPreflightRequest(""));
  EXPECT_FALSE(IsPreflightReply("hello from .bashrc"));
  EXPECT_FALSE(IsPreflightReply("@topolaunch-preflight"));
  EXPECT_TRUE(IsPreflightReply("@topolaunch-preflight {}"));
}

TEST(Preflight, RequestDefaultsForMissingFields) {
  Result<PreflightRequest> parsed = ParsePreflightRequest(R"({"preflight":{}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(*parsed, PreflightRequest{});
}

struct BadCase {
  std::string line;
  std::vector<std::string> wheres;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.line; }

std::vector<std::string> Wheres(const Error& error) {
  std::vector<std::string> wheres;
  for (const Problem& p : error.problems) wheres.push_back(p.where);
  return wheres;
}

class BadPreflightRequest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPreflightRequest, ReportsEveryProblemByPath) {
  Result<PreflightRequest> parsed = ParsePreflightRequest(GetParam().line);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(Wheres(parsed.error()), GetParam().wheres) << parsed.error().Message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadPreflightRequest,
    ::testing::Values(
        BadCase{"{\"preflight\":", {"preflight request:1:14"}},
        BadCase{R"([1])", {"preflight request: $"}},
        BadCase{R"({"preflight":5})", {"preflight request: $.preflight"}},
        BadCase{R"({"preflight":{"programs":["a",1],"master_port":70000,"master_addr":2,"want_layout":"yes"}})",
                {"preflight request: $.preflight.programs[1]", "preflight request: $.preflight.master_port",
                 "preflight request: $.preflight.master_addr", "preflight request: $.preflight.want_layout"}}));

class BadPreflightReply : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPreflightReply, ReportsEveryProblemByPath) {
  Result<PreflightReply> parsed = ParsePreflightReply(GetParam().line);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(Wheres(parsed.error()), GetParam().wheres) << parsed.error().Message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadPreflightReply,
    ::testing::Values(
        BadCase{R"({"hostname":"n"})", {"preflight reply"}},
        BadCase{"@topolaunch-preflight {", {"preflight reply:1:2"}},
        BadCase{"@topolaunch-preflight {}",
                {"preflight reply: $.hostname", "preflight reply: $.unix_time_ms", "preflight reply: $.programs",
                 "preflight reply: $.gpus"}},
        BadCase{R"(@topolaunch-preflight {"hostname":"n","unix_time_ms":-5,"programs":[{"name":"a"},2],"gpus":-1,)"
                R"("port_free":"yes","rdma_ports":{},"socket_route":[]})",
                {"preflight reply: $.unix_time_ms", "preflight reply: $.programs[0].path",
                 "preflight reply: $.programs[1]", "preflight reply: $.gpus", "preflight reply: $.port_free",
                 "preflight reply: $.rdma_ports", "preflight reply: $.socket_route"}}));

// Problems inside the layout, the ports and the route, without pinning
// every LayoutFromJson message.
TEST(Preflight, ReplyProblemsReachIntoLayoutPortsAndRoute) {
  std::string line =
      R"(@topolaunch-preflight {"hostname":"n","unix_time_ms":1,"programs":[],"gpus":0,"layout":{"pus":"x"},)"
      R"("rdma_ports":[{"device":"d","port":1,"link_layer":"Ethernet","state":"ACTIVE","gids":[{"index":0,"gid":"g","type":"RoCE v2"}]}],)"
      R"("socket_route":{"interface":1,"detail":""}})";
  Result<PreflightReply> parsed = ParsePreflightReply(line);
  ASSERT_FALSE(parsed.ok());
  std::vector<std::string> wheres = Wheres(parsed.error());
  auto has = [&](const std::string& where) { return std::find(wheres.begin(), wheres.end(), where) != wheres.end(); };
  EXPECT_TRUE(has("preflight reply: $.layout.pus")) << parsed.error().Message();
  EXPECT_TRUE(has("preflight reply: $.rdma_ports[0].gids[0].ndev")) << parsed.error().Message();
  EXPECT_TRUE(has("preflight reply: $.socket_route.interface")) << parsed.error().Message();
}

// --- judgement --------------------------------------------------------------

constexpr int64_t kNow = 1'717'000'000'000;

PreflightReply FitReply() {
  PreflightReply r;
  r.hostname = "gpu01.cluster";  // differs from the name asked: users connect by address
  r.unix_time_ms = kNow - 40;
  r.programs = {{"torchrun", "/usr/bin/torchrun"}};
  r.port_free = true;
  r.gpus = 8;
  return r;
}

PreflightExpectations Expect() {
  PreflightExpectations e;
  e.nproc_per_node = 8;
  e.master_host = "10.0.0.1";
  e.master_port = 29500;
  return e;
}

struct JudgeCase {
  std::string name;
  std::string host;
  PreflightReply reply;
  PreflightExpectations expect;
  std::vector<std::string> problems;
};

void PrintTo(const JudgeCase& c, std::ostream* os) { *os << c.name; }

class JudgePreflightTest : public ::testing::TestWithParam<JudgeCase> {};

TEST_P(JudgePreflightTest, OneSentencePerProblem) {
  EXPECT_EQ(JudgePreflight(GetParam().host, GetParam().reply, {kNow, kNow}, GetParam().expect), GetParam().problems);
}

JudgeCase With(std::string name, std::string host, std::vector<std::string> problems,
               const std::function<void(PreflightReply&, PreflightExpectations&)>& change) {
  JudgeCase c{std::move(name), std::move(host), FitReply(), Expect(), std::move(problems)};
  change(c.reply, c.expect);
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Table, JudgePreflightTest,
    ::testing::Values(
        With("fit", "10.0.0.1", {}, [](auto&, auto&) {}),
        With("program_missing", "10.0.0.2", {"torchrun not found in PATH of 10.0.0.2"},
             [](PreflightReply& r, auto&) { r.programs[0].path = ""; }),
        With("path_missing", "n2", {"torchrun not found in PATH of n2", "/opt/x not found or not executable on n2"},
             [](PreflightReply& r, auto&) { r.programs = {{"torchrun", ""}, {"/opt/x", ""}, {"sh", "/bin/sh"}}; }),
        With("port_in_use_on_master", "10.0.0.1", {"port 29500 in use"},
             [](PreflightReply& r, auto&) { r.port_free = false, r.port_problem = "in use"; }),
        With("port_other_reason", "10.0.0.1", {"port 29500 not free: Permission denied"},
             [](PreflightReply& r, auto&) { r.port_free = false, r.port_problem = "Permission denied"; }),
        With("port_in_use_elsewhere_is_fine", "10.0.0.2", {},
             [](PreflightReply& r, auto&) { r.port_free = false, r.port_problem = "in use"; }),
        With("port_not_checked", "10.0.0.1", {}, [](PreflightReply& r, auto&) { r.port_free = std::nullopt; }),
        With("no_gpu", "n", {"no GPU found (for a CPU-only job pass --no-gpus)"},
             [](PreflightReply& r, auto&) { r.gpus = 0; }),
        With("no_gpu_cpu_job", "n", {}, [](PreflightReply& r, PreflightExpectations& e) { r.gpus = 0, e.require_gpus = false; }),
        With("too_few_gpus", "n", {"2 GPUs, but --nproc-per-node 8"}, [](PreflightReply& r, auto&) { r.gpus = 2; }),
        With("one_gpu", "n", {"1 GPU, but --nproc-per-node 8"}, [](PreflightReply& r, auto&) { r.gpus = 1; }),
        With("more_gpus_than_ranks", "n", {}, [](PreflightReply& r, auto&) { r.gpus = 16; }),
        With("clock_ahead", "n", {"clock 3.2 s ahead of this machine"},
             [](PreflightReply& r, auto&) { r.unix_time_ms = kNow + 3200; }),
        With("clock_behind", "n", {"clock 1.5 s behind this machine"},
             [](PreflightReply& r, auto&) { r.unix_time_ms = kNow - 1500; }),
        With("clock_at_limits", "n", {}, [](PreflightReply& r, auto&) { r.unix_time_ms = kNow + 1000; }),
        With("clock_at_lower_limit", "n", {}, [](PreflightReply& r, auto&) { r.unix_time_ms = kNow - 1000; }),
        With("clock_wider_limit", "n", {}, [](PreflightReply& r, PreflightExpectations& e) {
          r.unix_time_ms = kNow + 4000, e.max_clock_skew_ms = 5000;
        }),
        With("folder_missing", "n", {"working folder /w: No such file or directory (not on a shared file system? pass --cwd)"},
             [](PreflightReply& r, auto&) { r.cwd_problem = "/w: No such file or directory"; }),
        With("script_missing", "n", {"/w/t.py: No such file or directory"},
             [](PreflightReply& r, auto&) { r.file_problems = {"/w/t.py: No such file or directory"}; }),
        With("master_unresolvable", "n",
             {"cannot resolve the master address gpu1 (gpu1: cannot resolve the rank-0 host: Name or service not known): "
              "rank 0 would be unreachable; pass --master-addr with a name or address every node resolves"},
             [](PreflightReply& r, PreflightExpectations& e) {
               e.master_addr = "gpu1";
               r.socket_route_problem = "gpu1: cannot resolve the rank-0 host: Name or service not known";
             }),
        With("master_route_other_problem_is_no_refusal", "n", {},
             [](PreflightReply& r, PreflightExpectations& e) {
               e.master_addr = "gpu1";
               r.socket_route_problem = "no IPv4 route";
             }),
        With("python_of_torchrun_unknown", "n",
             {"/usr/bin/torchrun: cannot tell which Python it runs: no #! line; pass --python"},
             [](PreflightReply& r, PreflightExpectations& e) {
               e.want_interpreter = true;
               r.interpreter_problem = "/usr/bin/torchrun: cannot tell which Python it runs: no #! line";
             }),
        With("python_of_torchrun_known", "n", {},
             [](PreflightReply& r, PreflightExpectations& e) {
               e.want_interpreter = true;
               r.interpreter = "/usr/bin/python3";
             }),
        With("everything", "10.0.0.1",
             {"torchrun not found in PATH of 10.0.0.1", "port 29500 in use",
              "no GPU found (for a CPU-only job pass --no-gpus)", "clock 10.0 s behind this machine"},
             [](PreflightReply& r, auto&) {
               r.programs[0].path = "", r.port_free = false, r.port_problem = "in use", r.gpus = 0;
               r.unix_time_ms = kNow - 10'000;
             })),
    [](const ::testing::TestParamInfo<JudgeCase>& info) { return info.param.name; });

// The clock is judged against the time between request and reply: a reply
// that took long on the way (a busy login node at 256 nodes) is no skew.
TEST(Preflight, ASlowReplyIsNoClockSkew) {
  PreflightReply r = FitReply();
  PreflightExpectations e;
  e.nproc_per_node = 8;
  r.unix_time_ms = kNow;
  EXPECT_TRUE(JudgePreflight("n", r, {kNow - 20'000, kNow + 30'000}, e).empty());
  EXPECT_EQ(JudgePreflight("n", r, {kNow + 1'500, kNow + 30'000}, e),
            std::vector<std::string>{"clock 1.5 s behind this machine"});
  EXPECT_EQ(JudgePreflight("n", r, {kNow - 30'000, kNow - 3'200}, e),
            std::vector<std::string>{"clock 3.2 s ahead of this machine"});
  EXPECT_TRUE(JudgePreflight("n", r, {kNow + 1'000, kNow + 9'000}, e).empty());  // at the limit
}

// `node1,10.0.0.1`: one machine under two names would get two torchruns.
TEST(Preflight, TheSameMachineUnderTwoNamesIsRefused) {
  PreflightReply a = FitReply(), b = FitReply(), c = FitReply(), d = FitReply();
  a.hostname = "node1", a.boot_id = "1b7c-boot";
  b.hostname = "node2", b.boot_id = "9e21-boot";
  c.hostname = "node1", c.boot_id = "1b7c-boot";  // node1 again, as an address
  d.hostname = "ctr2", d.boot_id = "1b7c-boot";   // a container on node1: a host name of its own
  std::vector<std::string> problems = SameMachineProblems({"node1", "node2", "10.0.0.1", "ctr2"}, {&a, &b, &c, &d});
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0], "");
  EXPECT_EQ(problems[1], "");
  EXPECT_EQ(problems[2],
            "the same machine as node1 (host name node1, boot id 1b7c-boot): two names for one machine would start two "
            "torchruns on the same GPUs and CPUs; list each machine once");
  EXPECT_EQ(problems[3], "");
  PreflightReply unknown = FitReply();  // an older agent: no boot id, nothing to compare
  unknown.hostname = "node1";
  EXPECT_EQ(SameMachineProblems({"node1", "x"}, {&unknown, &unknown}), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(SameMachineProblems({"node1", "x"}, {&a, nullptr}), (std::vector<std::string>{"", ""}));
}

// Without --nproc-per-node: one rank per GPU, when every node has the same.
TEST(Preflight, RanksPerNodeDefaultToTheGpusEveryNodeHas) {
  Result<int> agree = RanksPerNodeFromGpus({"gpu2", "gpu1", "gpu3"}, {8, 8, 8});
  ASSERT_TRUE(agree.ok()) << agree.error().Message();
  EXPECT_EQ(*agree, 8);

  Result<int> none = RanksPerNodeFromGpus({"cpu2", "cpu10", "cpu1"}, {0, 0, 0});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(ExitStatusFor(none.error().code), 3);
  EXPECT_EQ(none.error().Message(),
            "preflight: no GPU found on cpu[1-2,10]: --nproc-per-node is one rank per GPU by default; for a CPU-only "
            "job pass --no-gpus (one rank per node) or --nproc-per-node N");

  // The odd ones out are named against what most nodes have.
  Result<int> odd = RanksPerNodeFromGpus({"n3", "n1", "n4", "n2", "n5"}, {8, 8, 4, 8, 0});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().Message(),
            "preflight: the nodes do not agree on their GPU count, so there is no default --nproc-per-node: 8 GPUs on "
            "n[1-3], but 0 GPUs on n5, 4 GPUs on n4; pass --nproc-per-node N (at most the fewest) or leave the odd "
            "nodes out");
}

// The interfaces end up in NCCL_SOCKET_IFNAME on the node: a name that is
// not an interface name, or an address without its prefix, is refused.
TEST(Preflight, ARepliedInterfaceMustBeANameAndAnIpv4Subnet) {
  for (auto [name, address, where] : {std::tuple{"ens1f0,lo", "10.0.0.5/16", "$.socket_interfaces[0].name"},
                                      std::tuple{"", "10.0.0.5/16", "$.socket_interfaces[0].name"},
                                      std::tuple{"a-name-too-long-for-linux", "10.0.0.5/16", "$.socket_interfaces[0].name"},
                                      std::tuple{"ens1f0", "10.0.0.5", "$.socket_interfaces[0].address"},
                                      std::tuple{"ens1f0", "fe80::1/64", "$.socket_interfaces[0].address"}}) {
    PreflightReply reply = MinimalReply();
    reply.socket_interfaces = {{name, address, 1000}};
    Result<PreflightReply> parsed = ParsePreflightReply(FormatPreflightReply(reply));
    ASSERT_FALSE(parsed.ok()) << name << " " << address;
    EXPECT_NE(parsed.error().Message().find(where), std::string::npos) << parsed.error().Message();
  }
  PreflightReply many = MinimalReply();
  many.socket_interfaces.assign(257, {"eth0", "10.0.0.1/8", 1000});
  EXPECT_FALSE(ParsePreflightReply(FormatPreflightReply(many)).ok()) << "a node has a handful of interfaces, not hundreds";
}

// A node that floods the login node: a reply naming the same million CPUs
// many times parses in bounded memory (the layout's CPU lists merge ranges).
TEST(Preflight, AHostileReplyCostsBoundedMemory) {
  std::string cpus = "0-1048575";
  for (int i = 0; i < 200; ++i) cpus += ",0-1048575";
  std::string line = FormatPreflightReply(FullReply());
  size_t key = line.find(R"("cpus":")");
  ASSERT_NE(key, std::string::npos) << line;
  size_t value = key + 8;
  line.replace(value, line.find('"', value) - value, cpus);
  Result<PreflightReply> parsed = ParsePreflightReply(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  ASSERT_TRUE(parsed->layout);
  size_t most = 0;
  for (const NumaNode& node : parsed->layout->numa_nodes) most = std::max(most, node.cpus.size());
  EXPECT_EQ(most, 1u << 20);
}

}  // namespace
}  // namespace topolaunch
