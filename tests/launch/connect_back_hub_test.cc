// The login node's connect-back hub over real TCP on this machine: clients
// here play the agents (the handshake, sealed frames) and the attackers of
// the security review (a relay, a flood, a silent client), so each rule of
// connect_back.h is seen from the wire.
#include "launch/connect_back_hub.h"

#include "launch/connect_back_auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using std::chrono::milliseconds;

struct Line {
  size_t node;
  OutputStream stream;
  std::string text;
  bool operator==(const Line&) const = default;
};

struct Lines {
  std::mutex mutex;
  std::vector<Line> got;
  OutputSink Sink() {
    return [this](size_t node, OutputStream stream, std::string_view text) {
      std::lock_guard lock(mutex);
      got.push_back({node, stream, std::string(text)});
    };
  }
  std::vector<Line> Copy() {
    std::lock_guard lock(mutex);
    return got;
  }
};

// A client on 127.0.0.1 (the hub listens on every address). Once Sealed()
// it reads and writes records, as an agent does after the handshake.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~Client() { Close(); }
  bool connected() const { return connected_; }
  void Send(std::string_view text) { ASSERT_EQ(send(fd_, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size())); }
  void Sealed(const ChannelKeys& keys) {
    seal_ = RecordSealer(keys.to_run);
    open_ = RecordOpener(keys.to_agent);
    sealed_ = true;
  }
  /// What the agent sends after the handshake: `text` in records.
  void SendSealed(std::string_view text) {
    std::string wire;
    seal_.Seal(text, wire);
    Send(wire);
  }
  // One line (without '\n'), or "<eof>" / "<timeout>" / "<bad record>".
  std::string ReadLine(milliseconds limit = milliseconds(5000)) {
    for (;;) {
      if (size_t end = plain_.find('\n'); end != std::string::npos) {
        std::string line = plain_.substr(0, end);
        plain_.erase(0, end + 1);
        return line;
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(limit.count())) <= 0) return "<timeout>";
      char buf[4096];
      ssize_t got = read(fd_, buf, sealed_ ? sizeof buf : 1);  // before the handshake ends, nothing past its line
      if (got <= 0) return plain_.empty() ? "<eof>" : std::exchange(plain_, "");
      seen_.append(buf, static_cast<size_t>(got));
      if (!sealed_) plain_.append(buf, static_cast<size_t>(got));
      else if (!open_.Feed(std::string_view(buf, static_cast<size_t>(got)), plain_)) return "<bad record>";
    }
  }
  /// Every byte read so far, as it came off the wire.
  const std::string& seen() const { return seen_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool sealed_ = false;
  RecordSealer seal_;
  RecordOpener open_;
  std::string plain_;
  std::string seen_;
};

std::unique_ptr<ConnectBackHub> OpenHub(std::vector<std::string> hosts, Lines& lines) {
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open(std::move(hosts), lines.Sink());
  EXPECT_TRUE(hub.ok()) << hub.error().Message();
  return hub.ok() ? std::move(hub).value() : nullptr;
}

std::string Nonce(char fill) { return std::string(64, fill); }

// The agent's side of the handshake as `host`, task `task`, with `secret`:
// hello, `run`'s answer checked, ready; the client then speaks in records.
void Handshake(Client& client, const std::string& secret, const std::string& host, int task) {
  ASSERT_TRUE(client.connected());
  NodeCredential credential(secret, host);
  ConnectHello hello = credential.Hello(task, Nonce('a'));
  client.Send(FormatConnectHello(hello));
  std::optional<RunAnswer> answer = ParseRunAnswer(client.ReadLine());
  ASSERT_TRUE(answer);
  ASSERT_TRUE(credential.Proves(hello, *answer)) << "run's answer proves nothing";
  client.Send(FormatAgentReady(credential.Ready(hello, *answer)));
  client.Sealed(credential.Keys(hello, *answer));
}

void Hello(Client& client, const ConnectBackHub& hub, const std::string& host, int task) {
  Handshake(client, hub.where().secret, host, task);
}

TEST(ConnectBackHub, TellsWhereToConnectWithAFreshTokenAndNoLoopbackWhenThereIsMore) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> a = OpenHub({"n1"}, lines), b = OpenHub({"n1"}, lines);
  ASSERT_TRUE(a && b);
  ConnectBack where = a->where();
  EXPECT_GT(where.port, 0);
  EXPECT_NE(where.port, b->where().port);
  EXPECT_NE(where.secret, b->where().secret);
  EXPECT_FALSE(where.pinned);
  ASSERT_FALSE(where.addresses.empty());
  EXPECT_TRUE(ParseConnectBack(FormatConnectBack(where).substr(0, FormatConnectBack(where).size() - 1)));
  if (where.addresses.size() > 1 || where.addresses.front() != "127.0.0.1") {
    for (const std::string& address : where.addresses) EXPECT_NE(address, "127.0.0.1");
  }
}

// run --connect-back-address: that address alone is listened on and
// advertised, pinned (the agents use it, whatever srun's own address).
TEST(ConnectBackHub, AGivenAddressIsTheOnlyOneListenedOnAndItIsPinned) {
  Lines lines;
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open({"n1"}, lines.Sink(), ListenOn{"127.0.0.1", std::nullopt});
  ASSERT_TRUE(hub.ok()) << hub.error().Message();
  EXPECT_TRUE((*hub)->where().pinned);
  EXPECT_EQ((*hub)->where().addresses, std::vector<std::string>{"127.0.0.1"});
  int port = (*hub)->where().port;
  EXPECT_TRUE(Client(port).connected());
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in other{};
  other.sin_family = AF_INET;
  other.sin_port = htons(static_cast<uint16_t>(port));
  other.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2: this machine too, another address
  EXPECT_NE(connect(fd, reinterpret_cast<sockaddr*>(&other), sizeof other), 0) << "another address takes connections";
  close(fd);

  Result<std::unique_ptr<ConnectBackHub>> elsewhere = ConnectBackHub::Open({"n1"}, lines.Sink(), ListenOn{"192.0.2.77", std::nullopt});
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kBadInput);
  EXPECT_NE(elsewhere.error().Message().find("--connect-back-address"), std::string::npos) << elsewhere.error().Message();
  EXPECT_NE(elsewhere.error().Message().find("cannot listen on 192.0.2.77"), std::string::npos) << elsewhere.error().Message();
}

// A site's SrunPortRange: the port is one of it; with every port of it
// taken, an error names the range.
TEST(ConnectBackHub, APortOfTheSrunPortRangeOrAnErrorNamingIt) {
  // Two free ports next to each other, held here while the hub opens.
  std::vector<int> held;
  int first = 0;
  for (int base = 47000; base < 48000 && !first; base += 2) {
    for (int fd : held) close(fd);
    held.clear();
    for (int port = base; port < base + 2; ++port) {
      int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in6 any{};
      any.sin6_family = AF_INET6;
      any.sin6_port = htons(static_cast<uint16_t>(port));
      if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) {
        close(fd);
        break;
      }
      held.push_back(fd);
    }
    if (held.size() == 2) first = base;
  }
  ASSERT_GT(first, 0) << "no two free ports";
  Lines lines;
  Result<std::unique_ptr<ConnectBackHub>> full = ConnectBackHub::Open({"n1"}, lines.Sink(), ListenOn{"", PortRange{first, first + 1}});
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().Message().find(fmt::format("no port of SrunPortRange {}-{} (slurm.conf) is free", first, first + 1)),
            std::string::npos)
      << full.error().Message();
  close(held[1]);
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open({"n1"}, lines.Sink(), ListenOn{"", PortRange{first, first + 1}});
  ASSERT_TRUE(hub.ok()) << hub.error().Message();
  EXPECT_EQ((*hub)->where().port, first + 1);
  close(held[0]);
}

TEST(ConnectBackHub, EachNodesFramesReachTheSinkAndItsStdinOnlyIt) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1", "n2"}, lines);
  ASSERT_TRUE(hub);
  Client second(hub->where().port), first(hub->where().port);
  Hello(second, *hub, "n2", 1);
  Hello(first, *hub, "n1", 0);
  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(5000), nullptr);
  EXPECT_FALSE(missing[0]);
  EXPECT_FALSE(missing[1]);
  EXPECT_EQ(hub->NodeOfTask(0), 0u);
  EXPECT_EQ(hub->NodeOfTask(1), 1u);
  EXPECT_FALSE(hub->NodeOfTask(2));
  Client late(hub->where().port);
  EXPECT_FALSE(late.connected()) << "the port still takes connections once every agent is in";

  ASSERT_TRUE(hub->WriteStdin(0, "for n1\n").ok());
  ASSERT_TRUE(hub->WriteStdin(1, "for n2\n").ok());
  EXPECT_EQ(first.ReadLine(), "for n1");
  EXPECT_EQ(second.ReadLine(), "for n2");
  hub->CloseStdin(1);
  EXPECT_EQ(second.ReadLine(), "<eof>");  // the agent's "stop"
  EXPECT_FALSE(hub->WriteStdin(1, "late\n").ok());

  first.SendSealed(FormatOutputFrame(OutputStream::kStdout, "out of n1") + FormatOutputFrame(OutputStream::kStderr, "x 9"));
  first.SendSealed(FormatExitFrame(3));
  first.Close();
  second.SendSealed(FormatOutputFrame(OutputStream::kStderr, "n2 stops"));
  second.Close();  // no exit frame: lost
  std::optional<ExitInfo> one = hub->Wait(0, milliseconds(5000)), two = hub->Wait(1, milliseconds(5000));
  ASSERT_TRUE(one && two);
  EXPECT_EQ(*one, (ExitInfo{3, "", false}));
  EXPECT_EQ(*two, (ExitInfo{-1, "", true}));
  std::vector<Line> got = lines.Copy();
  // Every line went to the sink before its node counted as ended.
  EXPECT_NE(std::find(got.begin(), got.end(), Line{0, OutputStream::kStdout, "out of n1"}), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), Line{0, OutputStream::kStderr, "x 9"}), got.end());
  EXPECT_NE(std::find(got.begin(), got.end(), Line{1, OutputStream::kStderr, "n2 stops"}), got.end());
  EXPECT_EQ(got.size(), 3u);
}

TEST(ConnectBackHub, WrongProofsUnknownHostsAndSecondHellosAreRefusedAndNamed) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1", "n2"}, lines);
  ASSERT_TRUE(hub);
  std::string wrong = hub->where().secret;
  wrong[40] = wrong[40] == '0' ? '1' : '0';
  Client thief(hub->where().port);
  thief.Send(FormatConnectHello(NodeCredential(wrong, "n1").Hello(0, Nonce('a'))));
  EXPECT_EQ(thief.ReadLine(), "<eof>");
  EXPECT_EQ(thief.seen(), "") << "run answered a hello that proved nothing";

  Client stranger(hub->where().port), n1(hub->where().port), again(hub->where().port);
  stranger.Send(FormatConnectHello(NodeCredential(hub->where().secret, "n9").Hello(5, Nonce('a'))));
  EXPECT_EQ(stranger.ReadLine(), "<eof>");
  Hello(n1, *hub, "n1", 0);
  again.Send(FormatConnectHello(NodeCredential(hub->where().secret, "n1").Hello(1, Nonce('b'))));
  EXPECT_EQ(again.ReadLine(), "<eof>");

  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(500), nullptr);
  EXPECT_FALSE(missing[0]);
  ASSERT_TRUE(missing[1]);
  EXPECT_NE(missing[1]->find("the agent on n2 did not connect back"), std::string::npos) << *missing[1];
  EXPECT_NE(missing[1]->find("task 0 as 'n1' (its proof is wrong: not this job's agent)"), std::string::npos) << *missing[1];
  EXPECT_NE(missing[1]->find("task 5 as 'n9' (not a planned host)"), std::string::npos) << *missing[1];
  EXPECT_NE(missing[1]->find("task 1 as 'n1' (that node had already connected)"), std::string::npos) << *missing[1];
}

// Whatever reaches the port hears nothing until it proves a node's key: a
// scanner, a wrong address, a user probing for the secret.
TEST(ConnectBackHub, SaysNothingBeforeAHelloProvesItself) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  Client silent(hub->where().port), talker(hub->where().port);
  EXPECT_EQ(silent.ReadLine(milliseconds(300)), "<timeout>");
  talker.Send("GET / HTTP/1.0\n");
  EXPECT_EQ(talker.ReadLine(), "<eof>");
  EXPECT_EQ(silent.seen() + talker.seen(), "");
  // A hello that proved itself and then says more before the answer: no agent does.
  Client eager(hub->where().port);
  eager.Send(FormatConnectHello(NodeCredential(hub->where().secret, "n1").Hello(0, Nonce('a'))) + "o early\n");
  EXPECT_EQ(eager.ReadLine(), "<eof>");
}

// The security review's relay: a user listening where an agent connects
// (another address of the login node, a bridge address on the compute node)
// passes the handshake on and keeps copies. Logging in on its own with
// what it saw fails; what it passes on it can neither read nor change.
TEST(ConnectBackHub, ARelayCanNeitherLogInWithWhatItSawNorReadOrChangeTheChannel) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  const std::string secret = hub->where().secret;
  NodeCredential agent(secret, "n1");  // the real agent, behind the relay
  ConnectHello hello = agent.Hello(0, Nonce('a'));
  Client relayed(hub->where().port);  // the relay's connection for the agent
  relayed.Send(FormatConnectHello(hello));
  std::string answer_line = relayed.ReadLine();
  std::optional<RunAnswer> answer = ParseRunAnswer(answer_line);
  ASSERT_TRUE(answer);
  ASSERT_TRUE(agent.Proves(hello, *answer));
  std::string ready = FormatAgentReady(agent.Ready(hello, *answer));  // the agent's, held by the relay

  // The relay's own login: the hello it saw, then the ready it saw.
  Client own(hub->where().port);
  own.Send(FormatConnectHello(hello));
  std::optional<RunAnswer> fresh = ParseRunAnswer(own.ReadLine());
  ASSERT_TRUE(fresh);
  EXPECT_NE(fresh->nonce, answer->nonce);
  own.Send(ready);
  EXPECT_EQ(own.ReadLine(), "<eof>");
  EXPECT_NE(own.seen().find("@topolaunch-run"), std::string::npos);

  // The agent's own handshake goes on through the relay; n1 is in.
  relayed.Send(ready);
  relayed.Sealed(agent.Keys(hello, *answer));
  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(5000), nullptr);
  ASSERT_FALSE(missing[0]) << *missing[0];
  EXPECT_EQ(hub->NodeOfTask(0), 0u);

  // The launch message and its secrets pass the relay as ciphertext only.
  ASSERT_TRUE(hub->WriteStdin(0, "{\"env\":{\"HF_TOKEN\":\"hf_s3cr3t\"}}\n").ok());
  EXPECT_EQ(relayed.ReadLine(), "{\"env\":{\"HF_TOKEN\":\"hf_s3cr3t\"}}");
  EXPECT_EQ(relayed.seen().find("hf_s3cr3t"), std::string::npos);
  std::string everything = relayed.seen() + own.seen() + FormatConnectHello(hello) + ready;
  EXPECT_EQ(everything.find(secret), std::string::npos) << "the job's secret crossed the wire";
  EXPECT_EQ(everything.find(secret.substr(32)), std::string::npos);

  // A frame it forges or alters ends the node's connection, and says so.
  RecordSealer forged(Hmac("guess", "key"));
  std::string wire;
  forged.Seal(FormatExitFrame(0), wire);
  relayed.Send(wire);
  std::optional<ExitInfo> ended = hub->Wait(0, milliseconds(5000));
  ASSERT_TRUE(ended);
  EXPECT_TRUE(ended->connection_lost) << "a forged exit frame counted";
  std::vector<Line> got = lines.Copy();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].text.find("carried a record that does not authenticate"), std::string::npos) << got[0].text;
}

TEST(ConnectBackHub, AwaitingStopsWhenTheStepIsGone) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(20000), [] { return true; });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(missing[0]);
  EXPECT_NE(missing[0]->find("srun ended before the agent on n1 connected back"), std::string::npos) << *missing[0];
}

// A hub for one node, n1, whose agent (`n1`) has connected.
struct OneAgent {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  std::unique_ptr<Client> n1;
  bool Connect() {
    if (!hub) return false;
    n1 = std::make_unique<Client>(hub->where().port);
    Hello(*n1, *hub, "n1", 0);
    return !hub->AwaitAgents(milliseconds(5000), nullptr)[0];
  }
};

TEST(ConnectBackHub, NodesStillConnectedAfterTheStepEndedAreLost) {
  OneAgent one;
  ASSERT_TRUE(one.Connect());
  ConnectBackHub* hub = one.hub.get();
  std::atomic<bool> ended = false;
  hub->WatchStep([&ended] { return ended.load(); }, milliseconds(300));
  EXPECT_FALSE(hub->Wait(0, milliseconds(500)));
  ended = true;
  std::optional<ExitInfo> exit = hub->Wait(0, milliseconds(5000));
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->connection_lost);
  EXPECT_EQ(one.n1->ReadLine(), "<eof>");  // closed here: the agent stops
}

TEST(ConnectBackHub, DropClosesAtOnce) {
  OneAgent one;
  ASSERT_TRUE(one.Connect());
  EXPECT_EQ(one.hub->Drop(0), (ExitInfo{-1, "", true}));
  EXPECT_EQ(one.n1->ReadLine(), "<eof>");
  EXPECT_EQ(one.hub->Wait(0, milliseconds(0)), (ExitInfo{-1, "", true}));
}

// This process's CPU time (user and system), in seconds.
double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Room for thousands of sockets in this process.
void RaiseDescriptorLimit() {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  limit.rlim_cur = limit.rlim_max;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
}

// The security review's flood: 4,200 connections that say nothing filled
// the 4,096 pending slots, and no agent got in. Now they push out only each
// other (one source), and the agents still get in.
TEST(ConnectBackHub, AFloodOfSilentConnectionsKeepsNoAgentOut) {
  RaiseDescriptorLimit();
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 12'000) GTEST_SKIP() << "this process may open only " << limit.rlim_cur << " descriptors";
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1", "n2"}, lines);
  ASSERT_TRUE(hub);
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 4200; ++i) flood.push_back(std::make_unique<Client>(hub->where().port));
  Client n1(hub->where().port), n2(hub->where().port);
  Hello(n1, *hub, "n1", 0);
  Hello(n2, *hub, "n2", 1);
  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(5000), nullptr);
  EXPECT_FALSE(missing[0]) << *missing[0];
  EXPECT_FALSE(missing[1]) << *missing[1];
}

// A client that sends part of a hello and waits made the hub spin on it
// (1.8 s of CPU in 6 s); the agents after it still get in.
TEST(ConnectBackHub, APartialHelloCostsNoCpuAndKeepsNoAgentOut) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  Client slow(hub->where().port);
  slow.Send("@topolaunch-hel");
  double before = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  double spent = CpuSeconds() - before;
  EXPECT_LT(spent, 0.3) << "CPU seconds while a partial hello waited 2 s";
  Client n1(hub->where().port);
  Hello(n1, *hub, "n1", 0);
  EXPECT_FALSE(hub->AwaitAgents(milliseconds(5000), nullptr)[0]);
}

// A hello that arrives a byte at a time is read whole, and what the agent
// sent right after it reaches the sink as the node's.
TEST(ConnectBackHub, AHelloInPiecesThenAFrameInTheSamePacket) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  Client n1(hub->where().port);
  NodeCredential credential(hub->where().secret, "n1");
  ConnectHello hello = credential.Hello(0, Nonce('a'));
  std::string line = FormatConnectHello(hello);
  for (size_t i = 0; i < line.size(); ++i) {
    n1.Send(line.substr(i, 1));
    std::this_thread::sleep_for(milliseconds(1));
  }
  std::optional<RunAnswer> answer = ParseRunAnswer(n1.ReadLine());
  ASSERT_TRUE(answer);
  ChannelKeys keys = credential.Keys(hello, *answer);
  std::string frame;
  RecordSealer(keys.to_run).Seal(FormatOutputFrame(OutputStream::kStdout, "right after"), frame);
  n1.Send(FormatAgentReady(credential.Ready(hello, *answer)) + frame);
  EXPECT_FALSE(hub->AwaitAgents(milliseconds(5000), nullptr)[0]);
  for (int i = 0; i < 100 && lines.Copy().empty(); ++i) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(lines.Copy(), (std::vector<Line>{{0, OutputStream::kStdout, "right after"}}));
}

// Out of descriptors, accept4 fails while the connection stays queued and
// poll wakes for it at once: the hub spun. Now the oldest silent
// connection gives way, and the agent behind the flood gets in. The flood
// and the agent are other processes; only this one runs short.
TEST(ConnectBackHub, OutOfDescriptorsTheHubNeitherSpinsNorLocksTheAgentOut) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1"}, lines);
  ASSERT_TRUE(hub);
  int port = hub->where().port;
  size_t open_now = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++open_now;
  rlimit saved{};
  getrlimit(RLIMIT_NOFILE, &saved);
  rlimit tight = saved;
  tight.rlim_cur = open_now + 8;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  pid_t flood = fork();
  if (flood == 0) {
    setrlimit(RLIMIT_NOFILE, &saved);  // the flood has room; the hub's process does not
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 300; ++i) clients.push_back(std::make_unique<Client>(port));
    pause();
    _exit(0);
  }
  ASSERT_GT(flood, 0);
  std::this_thread::sleep_for(milliseconds(300));
  double before = CpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  double spent = CpuSeconds() - before;
  std::string secret = hub->where().secret;
  pid_t agent = fork();
  if (agent == 0) {
    setrlimit(RLIMIT_NOFILE, &saved);
    Client n1(port);
    Handshake(n1, secret, "n1", 0);
    if (::testing::Test::HasFailure()) _exit(1);
    n1.ReadLine(milliseconds(10'000));  // held until the hub closes it
    _exit(0);
  }
  std::optional<std::string> missing = hub->AwaitAgents(milliseconds(10'000), nullptr)[0];
  setrlimit(RLIMIT_NOFILE, &saved);
  kill(flood, SIGKILL);
  waitpid(flood, nullptr, 0);
  hub.reset();
  int status = 0;
  waitpid(agent, &status, 0);
  EXPECT_LT(spent, 0.5) << "CPU seconds in 1 s out of descriptors";
  EXPECT_FALSE(missing) << *missing;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Once the agents were awaited, the port takes no more connections: late or
// not, nobody else may wait there.
TEST(ConnectBackHub, ThePortClosesWhenTheWaitForAgentsIsOver) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1", "n2"}, lines);
  ASSERT_TRUE(hub);
  Client idle(hub->where().port);
  ASSERT_TRUE(idle.connected());
  EXPECT_TRUE(hub->AwaitAgents(milliseconds(300), nullptr)[0]);
  EXPECT_EQ(idle.ReadLine(milliseconds(2000)), "<eof>") << "the silent connection is closed";
  bool refused = false;
  for (int i = 0; i < 50 && !refused; ++i) {
    refused = !Client(hub->where().port).connected();
    if (!refused) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(refused) << "the port still takes connections";
}

}  // namespace
}  // namespace topolaunch
