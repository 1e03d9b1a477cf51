// The login node's connect-back hub over real TCP on this machine: clients
// here play the agents (greeting, hello, frames), so each rule of
// connect_back.h is seen from the wire.
#include "launch/connect_back_hub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

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

// A client on 127.0.0.1 (the hub listens on every address).
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
  // One line (without '\n'), or "<eof>" / "<timeout>".
  std::string ReadLine(milliseconds limit = milliseconds(5000)) {
    std::string line;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(limit.count())) <= 0) return "<timeout>";
      char c;
      if (read(fd_, &c, 1) <= 0) return line.empty() ? "<eof>" : line;
      if (c == '\n') return line;
      line += c;
    }
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::unique_ptr<ConnectBackHub> OpenHub(std::vector<std::string> hosts, Lines& lines) {
  Result<std::unique_ptr<ConnectBackHub>> hub = ConnectBackHub::Open(std::move(hosts), lines.Sink());
  EXPECT_TRUE(hub.ok()) << hub.error().Message();
  return hub.ok() ? std::move(hub).value() : nullptr;
}

// Connects, checks the greeting, says hello as `host`, task `task`.
void Hello(Client& client, const ConnectBackHub& hub, const std::string& host, int task) {
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(IsRunGreeting(client.ReadLine(), hub.where().token));
  client.Send(FormatConnectHello({hub.where().token, task, host}));
}

TEST(ConnectBackHub, TellsWhereToConnectWithAFreshTokenAndNoLoopbackWhenThereIsMore) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> a = OpenHub({"n1"}, lines), b = OpenHub({"n1"}, lines);
  ASSERT_TRUE(a && b);
  ConnectBack where = a->where();
  EXPECT_GT(where.port, 0);
  EXPECT_NE(where.port, b->where().port);
  EXPECT_NE(where.token, b->where().token);
  ASSERT_FALSE(where.addresses.empty());
  EXPECT_TRUE(ParseConnectBack(FormatConnectBack(where).substr(0, FormatConnectBack(where).size() - 1)));
  if (where.addresses.size() > 1 || where.addresses.front() != "127.0.0.1")
    for (const std::string& address : where.addresses) EXPECT_NE(address, "127.0.0.1");
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

  first.Send(FormatOutputFrame(OutputStream::kStdout, "out of n1") + FormatOutputFrame(OutputStream::kStderr, "x 9"));
  first.Send(FormatExitFrame(3));
  first.Close();
  second.Send(FormatOutputFrame(OutputStream::kStderr, "n2 stops"));
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

TEST(ConnectBackHub, WrongTokensUnknownHostsAndSecondHellosAreRefusedAndNamed) {
  Lines lines;
  std::unique_ptr<ConnectBackHub> hub = OpenHub({"n1", "n2"}, lines);
  ASSERT_TRUE(hub);
  std::string wrong = hub->where().token;
  wrong[40] = wrong[40] == '0' ? '1' : '0';
  Client thief(hub->where().port);
  ASSERT_TRUE(IsRunGreeting(thief.ReadLine(), hub->where().token));
  thief.Send(FormatConnectHello({wrong, 0, "n1"}));
  EXPECT_EQ(thief.ReadLine(), "<eof>");

  Client stranger(hub->where().port), n1(hub->where().port), again(hub->where().port);
  Hello(stranger, *hub, "n9", 5);
  EXPECT_EQ(stranger.ReadLine(), "<eof>");
  Hello(n1, *hub, "n1", 0);
  Hello(again, *hub, "n1", 1);
  EXPECT_EQ(again.ReadLine(), "<eof>");

  std::vector<std::optional<std::string>> missing = hub->AwaitAgents(milliseconds(500), nullptr);
  EXPECT_FALSE(missing[0]);
  ASSERT_TRUE(missing[1]);
  EXPECT_NE(missing[1]->find("the agent on n2 did not connect back"), std::string::npos) << *missing[1];
  EXPECT_NE(missing[1]->find("task 5 as 'n9'"), std::string::npos) << *missing[1];
  EXPECT_NE(missing[1]->find("task 1 as 'n1'"), std::string::npos) << *missing[1];
  EXPECT_EQ(missing[1]->find("task 0"), std::string::npos) << "the refused token is no hello: " << *missing[1];
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

}  // namespace
}  // namespace topolaunch
