// The connect-back lines and frames (connect_back.h): what goes out is read
// back the same, and what is not well formed is refused.
#include "launch/connect_back.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

const std::string kToken = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef";

std::string WithoutNewline(std::string line) {
  EXPECT_EQ(line.back(), '\n');
  line.pop_back();
  return line;
}

TEST(ConnectBack, TheLineReadsBackAsWritten) {
  ConnectBack where{40123, kToken, {"10.0.0.1", "fd00::1"}};
  std::string line = WithoutNewline(FormatConnectBack(where));
  EXPECT_TRUE(IsConnectBack(line));
  EXPECT_EQ(ParseConnectBack(line), where);
}

TEST(ConnectBack, MalformedLinesAreRefused) {
  for (const std::string& line : std::vector<std::string>{
           "@topolaunch-connect 0 " + kToken + " 10.0.0.1",                  // port 0
           "@topolaunch-connect 65536 " + kToken + " 10.0.0.1",              // port too large
           "@topolaunch-connect 80 " + kToken,                               // no address
           "@topolaunch-connect 80 " + kToken.substr(1) + " 10.0.0.1",       // short token
           "@topolaunch-connect 80 " + kToken + "0 10.0.0.1",                // long token
           "@topolaunch-connect 80 " + std::string(64, 'G') + " 10.0.0.1",   // not hex
           "@topolaunch-connect 80 " + kToken + " host.example.com",         // not numeric
           "@topolaunch-connect x80 " + kToken + " 10.0.0.1",
           "@topolaunch-connect",
           "{\"argv\":[\"true\"]}",
       })
    EXPECT_FALSE(ParseConnectBack(line)) << line;
}

TEST(ConnectBack, EachSideProvesTheTokenWithItsOwnHalf) {
  std::string greeting = WithoutNewline(FormatRunGreeting(kToken));
  EXPECT_TRUE(IsRunGreeting(greeting, kToken));
  EXPECT_EQ(greeting.find(kToken.substr(32)), std::string::npos) << "the greeting gives away the agent's half";
  std::string other = kToken;
  other[3] = 'f';
  EXPECT_FALSE(IsRunGreeting(greeting, other));

  std::string hello = WithoutNewline(FormatConnectHello({kToken, 7, "node7"}));
  EXPECT_EQ(hello.find(kToken.substr(0, 32)), std::string::npos) << "the hello repeats run's half";
  ConnectHello read;
  ASSERT_TRUE(ParseConnectHello(hello, kToken, read));
  EXPECT_EQ(read, (ConnectHello{kToken, 7, "node7"}));
  other = kToken;
  other[60] = '0';
  EXPECT_FALSE(ParseConnectHello(hello, other, read));
}

TEST(ConnectBack, MalformedHellosAreRefused) {
  std::string half = kToken.substr(32);
  ConnectHello read;
  for (const std::string& line : std::vector<std::string>{"@topolaunch-hello " + half + " -1 node1", "@topolaunch-hello " + half + " 10000001 node1",
                           "@topolaunch-hello " + half + " 1", "@topolaunch-hello " + half + " 1 node 1",
                           "@topolaunch-hello " + half + " 1 node\x01", "@topolaunch-hello " + kToken + " 1 node1",
                           "@topolaunch-run " + half})
    EXPECT_FALSE(ParseConnectHello(line, kToken, read)) << line;
}

TEST(ConnectBack, SameTokenComparesWholeStrings) {
  EXPECT_TRUE(SameToken("abc", "abc"));
  EXPECT_FALSE(SameToken("abc", "abd"));
  EXPECT_FALSE(SameToken("abc", "ab"));
  EXPECT_FALSE(SameToken("", "a"));
}

TEST(ConnectBack, FramesCarryEveryLineAndTheStatusLast) {
  // a frame's text views the line it was parsed from: the lines outlive the frames
  std::string out_line = WithoutNewline(FormatOutputFrame(OutputStream::kStdout, "x 0"));
  AgentFrame out = ParseAgentFrame(out_line);
  EXPECT_EQ(out.kind, AgentFrame::Kind::kOutput);
  EXPECT_EQ(out.stream, OutputStream::kStdout);
  EXPECT_EQ(out.text, "x 0");  // a worker printing a status line stays a line
  std::string err_line = WithoutNewline(FormatOutputFrame(OutputStream::kStderr, ""));
  AgentFrame err = ParseAgentFrame(err_line);
  EXPECT_EQ(err.kind, AgentFrame::Kind::kOutput);
  EXPECT_EQ(err.stream, OutputStream::kStderr);
  EXPECT_EQ(err.text, "");
  AgentFrame exit = ParseAgentFrame(WithoutNewline(FormatExitFrame(143)));
  EXPECT_EQ(exit.kind, AgentFrame::Kind::kExit);
  EXPECT_EQ(exit.status, 143);
  for (std::string_view bad : {"", "o", "x", "x 256", "x -1", "x 1 2", "q text", "otext"})
    EXPECT_EQ(ParseAgentFrame(bad).kind, AgentFrame::Kind::kBad) << bad;
}

// The agent goes only where srun came from when Slurm says where that is:
// an address of the advertised list that a compute node also has (docker0's
// 172.17.0.1) could be another user's listener there.
TEST(AddressesToTry, OnlyTheLaunchNodeWhenSlurmNamesIt) {
  ConnectBack where{40000, std::string(64, 'a'), {"10.0.0.5", "172.17.0.1", "fd00::5"}};
  EXPECT_EQ(AddressesToTry(where, "10.0.0.5"), std::vector<std::string>{"10.0.0.5"});
  EXPECT_EQ(AddressesToTry(where, "10.9.9.9"), std::vector<std::string>{"10.9.9.9"}) << "even when run did not list it";
  EXPECT_EQ(AddressesToTry(where, ""), where.addresses);
  EXPECT_EQ(AddressesToTry(where, "login node"), where.addresses) << "not an address: the advertised list";
}

}  // namespace
}  // namespace topolaunch
