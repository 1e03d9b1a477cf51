// `topolaunch agent`, the real binary: locally under LocalExecutor, and on
// namespaced hosts over SSH, where losing the connection must take the
// whole remote process tree down (a grandchild that called setsid too),
// and where the launch message's environment must not appear in any
// process's command line. Locally also the preflight conversation that
// comes before the launch message.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "launch/connect_back.h"
#include "launch/launch_message.h"
#include "launch/local_executor.h"
#include "launch/preflight.h"
#include "launch/ssh_executor.h"
#include "support/launch_printers.h"
#include "support/netns_testbed.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

using namespace std::chrono_literals;
using testing::NetnsTestbed;

struct Lines {
  std::mutex mutex;
  std::vector<std::string> out, err;
  OutputSink Sink() {
    return [this](size_t, OutputStream s, std::string_view line) {
      std::lock_guard lock(mutex);
      (s == OutputStream::kStdout ? out : err).emplace_back(line);
    };
  }
  // The first stdout line, waiting up to 10 s for it.
  std::string First() {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mutex);
        if (!out.empty()) return out[0];
      }
      std::this_thread::sleep_for(20ms);
    }
    return "";
  }
};

LaunchRequest AgentRequest(const std::string& host, Command command, std::chrono::milliseconds grace = 2000ms) {
  LaunchRequest request{host, {{testing::TopolaunchBinary(), "agent"}}};
  request.stdin_data = FormatLaunchMessage({std::move(command), grace});
  request.close_stdin = false;  // EOF means "stop"
  return request;
}

bool Gone(pid_t pid, std::chrono::milliseconds within) {
  for (auto end = std::chrono::steady_clock::now() + within; std::chrono::steady_clock::now() < end;) {
    std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty() || stat.find(") Z") != std::string::npos) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// A command whose grandchild escapes into its own session.
const Command kTreeWithSetsid{{"sh", "-c", "setsid sleep 1001 & echo $!; exec sleep 1002"}};

TEST(Agent, RunsTheMessageAndExitsWithItsStatus) {
  LocalExecutor executor;
  Lines lines;
  std::vector<LaunchRequest> requests = {AgentRequest("", {{"sh", "-c", "echo \"$TL_X\"; echo err >&2; exit 5"}, {{"TL_X", "a b"}}})};
  std::vector<StartResult> started = executor.StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 5});
  EXPECT_EQ(lines.out, std::vector<std::string>{"a b"});
  EXPECT_EQ(lines.err, std::vector<std::string>{"err"});
}

// With rank_output, workers started through `topolaunch bind` (as torchrun
// starts them) reach the agent on their own connections: their lines come
// back labelled, on their own stream; the command's own lines stay plain.
// The private folder of the socket is gone afterwards.
TEST(Agent, RankLinesComeBackLabelledThroughBind) {
  LocalExecutor executor;
  Lines lines;
  std::string bind = testing::TopolaunchBinary();
  std::string workers = fmt::format(
      "echo \"$TOPOLAUNCH_RANK_OUTPUT\" > socket; echo own; for r in 0 1; do RANK=$((r + 4)) LOCAL_RANK=$r {} bind -- sh -c 'echo \"out $RANK\"; echo \"err $RANK\" >&2; "
      "printf \"tail $RANK\"; echo \"$TOPOLAUNCH_RANK_OUTPUT\" > folder.$RANK' & done; wait",
      bind);
  testing::TempDir dir;
  LaunchMessage message{{{"sh", "-c", workers}, {}, dir.path()}, 2000ms};
  message.rank_output = true;
  LaunchRequest request{"", {{bind, "agent"}}, FormatLaunchMessage(message), false};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 0});
  std::sort(lines.out.begin(), lines.out.end());
  std::sort(lines.err.begin(), lines.err.end());
  EXPECT_EQ(lines.out, (std::vector<std::string>{"\x1e" "4 0 out 4", "\x1e" "4 0 tail 4", "\x1e" "5 1 out 5",
                                                 "\x1e" "5 1 tail 5", "own"}));
  EXPECT_EQ(lines.err, (std::vector<std::string>{"\x1e" "4 0 err 4", "\x1e" "5 1 err 5"}));
  EXPECT_EQ(testing::ReadFile(dir.File("folder.4")), "\n") << "bind takes the variable out of the script's environment";
  std::string socket = testing::ReadFile(dir.File("socket"));
  ASSERT_TRUE(socket.ends_with("/out\n")) << socket;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(socket.substr(0, socket.size() - 1)).parent_path())) << socket;
}

TEST(Agent, RefusesABadMessage) {
  LocalExecutor executor;
  Lines lines;
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, "{\"argv\":[]}\n"};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok());
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 2});
  ASSERT_EQ(lines.err.size(), 1u);
  EXPECT_EQ(lines.err[0], "topolaunch: error: launch message: $.argv: empty: nothing to run");
}

// A TCP port of the loopback, kept bound: connections are refused, or,
// with `listen_too`, wait for the test to accept them (a program that is
// not `run`).
struct FakeRun {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  explicit FakeRun(bool listen_too) {
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any);
    socklen_t size = sizeof any;
    getsockname(fd, reinterpret_cast<sockaddr*>(&any), &size);
    port = ntohs(any.sin_port);
    if (listen_too) listen(fd, 4);
  }
  ~FakeRun() { close(fd); }
};

const std::string kSecret = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef";

TEST(Agent, ConnectingBackNamesEveryAddressItTried) {
  FakeRun nothing(false);  // bound, not listening: connections are refused
  LocalExecutor executor;
  Lines lines;
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, FormatConnectBack({nothing.port, kSecret, {"127.0.0.1"}})};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok());
  std::optional<ExitInfo> exit = (*started[0])->Wait(30s);
  ASSERT_TRUE(exit);
  EXPECT_NE(exit->exit_code, 0);
  ASSERT_EQ(lines.err.size(), 1u);
  EXPECT_NE(lines.err[0].find(fmt::format("cannot reach `run` on the login node (127.0.0.1 port {}: ", nothing.port)),
            std::string::npos) << lines.err[0];
}

// A program at the address that is not this job's `run` (another user's
// listener) gets a hello it cannot use elsewhere, and its answer, which
// proves nothing, gets no further word: the agent gives up on it.
TEST(Agent, TrustsNoProgramThatCannotProveTheNodesKey) {
  FakeRun other(true);
  LocalExecutor executor;
  Lines lines;
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, FormatConnectBack({other.port, kSecret, {"127.0.0.1"}})};
  request.command.env = {{"SLURMD_NODENAME", "node4"}, {"SLURM_PROCID", "4"}};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok());
  int peer = accept4(other.fd, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(peer, 0);
  std::string hello;
  char c;
  while (read(peer, &c, 1) == 1 && c != '\n') hello += c;
  std::optional<ConnectHello> said = ParseConnectHello(hello);
  ASSERT_TRUE(said) << hello;
  EXPECT_EQ(said->host, "node4");
  EXPECT_EQ(said->task, 4);
  EXPECT_EQ(hello.find(kSecret.substr(0, 16)), std::string::npos) << "the secret went to a stranger";
  std::string answer = FormatRunAnswer({std::string(64, 'b'), std::string(64, 'c')});
  ASSERT_EQ(write(peer, answer.data(), answer.size()), static_cast<ssize_t>(answer.size()));
  std::optional<ExitInfo> exit = (*started[0])->Wait(30s);
  ASSERT_TRUE(exit);
  EXPECT_NE(exit->exit_code, 0);
  char got[256];
  EXPECT_EQ(read(peer, got, sizeof got), 0) << "the agent said more to a stranger";
  close(peer);
  ASSERT_EQ(lines.err.size(), 1u);
  EXPECT_NE(lines.err[0].find("not this job's `run` (its answer proves nothing)"), std::string::npos) << lines.err[0];
}

// Heartbeats keep the tree; when they stop (the login node cut off, which
// closes no connection) the agent stops the tree by itself.
TEST(Agent, MissedHeartbeatsStopTheTree) {
  LocalExecutor executor;
  Lines lines;
  LaunchMessage message{kTreeWithSetsid, 500ms};
  message.heartbeat = 200ms;
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, FormatLaunchMessage(message)};
  request.close_stdin = false;
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  RunningCommand& agent = **started[0];
  for (int beat = 0; beat < 8; ++beat) {  // 1.6 s of heartbeats: still running
    std::this_thread::sleep_for(200ms);
    ASSERT_TRUE(agent.WriteStdin("\n").ok());
  }
  EXPECT_FALSE(agent.Wait(0ms)) << "stopped although heartbeats came";
  pid_t escaped = std::stoi(lines.First());
  auto silent = std::chrono::steady_clock::now();
  std::optional<ExitInfo> exit = agent.Wait(5s);  // no more heartbeats
  ASSERT_TRUE(exit);
  EXPECT_LT(std::chrono::steady_clock::now() - silent, 3s);
  EXPECT_EQ(*exit, (ExitInfo{.exit_code = 128 + 15}));
  EXPECT_TRUE(Gone(escaped, 2s)) << "the setsid grandchild survived";
  std::lock_guard lock(lines.mutex);
  ASSERT_FALSE(lines.err.empty());
  EXPECT_NE(lines.err.back().find("no heartbeat from `run`"), std::string::npos) << lines.err.back();
}

// Processes whose parent ended become the agent's (it is a subreaper):
// when they exit, the agent reaps them, so no zombie stays for the job.
int ZombieChildrenOf(pid_t parent) {
  int zombies = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string stat = testing::ReadFile(entry.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) continue;
    char state = stat[close + 2];
    int ppid = std::atoi(stat.c_str() + close + 4);
    if (state == 'Z' && ppid == parent) ++zombies;
  }
  return zombies;
}

TEST(Agent, ReapsTheOrphansItAdopts) {
  LocalExecutor executor;
  Lines lines;
  // Five subshells each leave a short sleep behind, orphaned to the agent;
  // the sleeps end while the job still runs.
  Command leaves_orphans{{"sh", "-c", "for i in 1 2 3 4 5; do (sleep 0.1 &); done; echo $PPID; sleep 3"}};
  std::vector<LaunchRequest> requests = {AgentRequest("", leaves_orphans)};
  std::vector<StartResult> started = executor.StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  std::string first = lines.First();
  ASSERT_FALSE(first.empty()) << "the job printed nothing";
  pid_t agent = std::stoi(first);
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(ZombieChildrenOf(agent), 0) << "the agent left its adopted orphans as zombies";
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 0});
}

std::string ShortHostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string host = name;
  return host.substr(0, host.find('.'));
}

PreflightRequest NoLayoutRequest() {
  PreflightRequest request;
  request.want_layout = false;
  return request;
}

// The conversation `run` has: preflight, wait for the reply, then the launch message.
TEST(Agent, AnswersThePreflightThenRunsTheLaunchMessage) {
  LocalExecutor executor;
  Lines lines;
  PreflightRequest preflight;
  preflight.programs = {"sh", "no-such-program-xyz"};
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, FormatPreflightRequest(preflight)};
  request.close_stdin = false;
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  std::string first = lines.First();
  ASSERT_TRUE(IsPreflightReply(first)) << first;
  Result<PreflightReply> reply = ParsePreflightReply(first);
  ASSERT_TRUE(reply.ok()) << reply.error().Message();
  EXPECT_EQ(reply->hostname, ShortHostName());
  ASSERT_EQ(reply->programs.size(), 2u);
  EXPECT_NE(reply->programs[0].path, "");
  EXPECT_EQ(reply->programs[1].path, "");
  EXPECT_TRUE(reply->layout.has_value()) << reply->layout_problem;
  {
    std::lock_guard lock(lines.mutex);
    EXPECT_EQ(lines.out.size(), 1u) << "nothing runs before the launch message";
  }
  ASSERT_TRUE((*started[0])->WriteStdin(FormatLaunchMessage({{{"sh", "-c", "echo ran; exit 4"}}, 2000ms})).ok());
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 4});
  ASSERT_EQ(lines.out.size(), 2u);
  EXPECT_EQ(lines.out[1], "ran");
  EXPECT_EQ(lines.err, std::vector<std::string>{});
}

// EOF after the reply means "do not start" (another node failed its
// preflight): an unfinished line is not a launch message either.
TEST(Agent, PreflightThenEofStartsNothingAndExitsZero) {
  LocalExecutor executor;
  Lines lines;
  std::string partial = FormatLaunchMessage({{{"sh", "-c", "echo ran"}}});
  partial.pop_back();  // no newline: cut off
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}},
                        FormatPreflightRequest(NoLayoutRequest()) + partial};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 0});
  ASSERT_EQ(lines.out.size(), 1u) << "only the reply";
  Result<PreflightReply> reply = ParsePreflightReply(lines.out[0]);
  ASSERT_TRUE(reply.ok()) << reply.error().Message();
  EXPECT_EQ(reply->hostname, ShortHostName());
  EXPECT_FALSE(reply->layout.has_value()) << "not asked";
  EXPECT_EQ(lines.err, std::vector<std::string>{});
}

TEST(Agent, RefusesABadPreflightRequest) {
  LocalExecutor executor;
  Lines lines;
  LaunchRequest request{"", {{testing::TopolaunchBinary(), "agent"}}, "{\"preflight\":{\"master_port\":-1}}\n"};
  std::vector<StartResult> started = executor.StartAll({&request, 1}, lines.Sink());
  ASSERT_TRUE(started[0].ok());
  EXPECT_EQ((*started[0])->Wait(10s), ExitInfo{.exit_code = 2});
  EXPECT_EQ(lines.out, std::vector<std::string>{});
  ASSERT_EQ(lines.err.size(), 1u);
  EXPECT_EQ(lines.err[0], "topolaunch: error: preflight request: $.preflight.master_port: expected an integer from 0 to 65535, found -1");
}

TEST(Agent, SigtermStopsTheWholeTree) {
  LocalExecutor executor;
  Lines lines;
  std::vector<LaunchRequest> requests = {AgentRequest("", kTreeWithSetsid)};
  std::vector<StartResult> started = executor.StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok());
  std::string first = lines.First();
  ASSERT_FALSE(first.empty());
  pid_t escaped = std::stoi(first);
  ExitInfo info = (*started[0])->Stop(10s);  // SIGTERM to the agent only: it must do the rest
  EXPECT_EQ(info, ExitInfo{.exit_code = 128 + 15});
  EXPECT_TRUE(Gone(escaped, 1s)) << "the setsid'ed grandchild " << escaped << " survived";
}

class AgentOverSshTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = NetnsTestbed::Unavailable()) {
      skip_reason_ = *why;
      return;
    }
    auto testbed = NetnsTestbed::Start(2);
    if (testbed.ok()) testbed_ = std::move(*testbed).release();
    else start_error_ = testbed.error().Message();
  }
  static void TearDownTestSuite() {
    delete testbed_;
    testbed_ = nullptr;
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_NE(testbed_, nullptr) << start_error_;
    enter_ = std::make_unique<NetnsTestbed::EnterHead>(*testbed_);
    ASSERT_TRUE(enter_->ok());
    executor_ = std::make_unique<SshExecutor>(testbed_->ClientSshOptions(testbed_->dir().path(), testbed_->KnownHosts()));
  }
  void TearDown() override {
    executor_.reset();
    enter_.reset();
  }
  // Processes in node i's namespace whose command line holds `needle`.
  std::vector<pid_t> Matching(int node, const std::string& needle) {
    std::vector<pid_t> found;
    for (pid_t pid : testbed_->PidsInNode(node)) {
      std::string cmdline = testing::ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      if (cmdline.find(needle) != std::string::npos) found.push_back(pid);
    }
    return found;
  }
  bool NoneLeft(int node, const std::string& needle, std::chrono::milliseconds within) {
    for (auto end = std::chrono::steady_clock::now() + within; std::chrono::steady_clock::now() < end;) {
      if (Matching(node, needle).empty()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  static inline NetnsTestbed* testbed_ = nullptr;
  static inline std::string skip_reason_, start_error_;
  std::unique_ptr<NetnsTestbed::EnterHead> enter_;
  std::unique_ptr<SshExecutor> executor_;
};

TEST_F(AgentOverSshTest, LosingTheConnectionStopsTheRemoteTreeWithin5s) {
  Lines lines;
  std::vector<LaunchRequest> requests = {AgentRequest("node1", kTreeWithSetsid)};
  std::vector<StartResult> started = executor_->StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  ASSERT_FALSE(lines.First().empty());
  ASSERT_EQ(Matching(1, "sleep 1001").size(), 1u);
  ASSERT_EQ(Matching(1, "sleep 1002").size(), 1u);
  // Zero grace: the connection is dropped without a word (like a killed `run`).
  EXPECT_TRUE((*started[0])->Stop(0ms).connection_lost);
  EXPECT_TRUE(NoneLeft(1, "sleep 100", 5s)) << "left running on node1";
  EXPECT_TRUE(NoneLeft(1, "topolaunch agent", 5s)) << "agent left running on node1";
}

TEST_F(AgentOverSshTest, EofOnStdinStopsTheTreeAndReportsTheStatus) {
  Lines lines;
  std::vector<LaunchRequest> requests = {AgentRequest("node2", kTreeWithSetsid)};
  std::vector<StartResult> started = executor_->StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  ASSERT_FALSE(lines.First().empty());
  EXPECT_EQ((*started[0])->Stop(5s), ExitInfo{.exit_code = 128 + 15});
  EXPECT_TRUE(NoneLeft(2, "sleep 100", 1s));
}

TEST_F(AgentOverSshTest, EnvironmentNeverAppearsInAnyCommandLine) {
  std::string secret = fmt::format("tl-secret-{}", std::random_device{}());
  Lines lines;
  Command command{{"sh", "-c", "echo started; exec sleep 1003"}, {{"TL_SECRET", secret}}};
  std::vector<LaunchRequest> requests = {AgentRequest("node1", command)};
  std::vector<StartResult> started = executor_->StartAll(requests, lines.Sink());
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  ASSERT_EQ(lines.First(), "started");
  ASSERT_EQ(Matching(1, "sleep 1003").size(), 1u);
  pid_t sleeper = Matching(1, "sleep 1003")[0];
  EXPECT_NE(testing::ReadFile("/proc/" + std::to_string(sleeper) + "/environ").find(secret), std::string::npos)
      << "the command did not get the variable";
  size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    if (!std::isdigit(static_cast<unsigned char>(entry.path().filename().string()[0]))) continue;
    if (testing::ReadFile(entry.path().string() + "/cmdline").find(secret) != std::string::npos) ++seen;
  }
  EXPECT_EQ(seen, 0u) << "the secret is in a command line";
  (*started[0])->Stop(3s);
}

}  // namespace
}  // namespace topolaunch
