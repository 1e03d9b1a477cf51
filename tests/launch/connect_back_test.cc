// The connect-back lines and frames (connect_back.h): what goes out is read
// back the same, and what is not well formed is refused.
#include "launch/connect_back.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

const std::string kSecret = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef";
const std::string kNonce = std::string(64, 'a');
const std::string kProof = std::string(32, '0') + std::string(32, 'f');

std::string WithoutNewline(std::string line) {
  EXPECT_EQ(line.back(), '\n');
  line.pop_back();
  return line;
}

TEST(ConnectBack, TheLineReadsBackAsWritten) {
  ConnectBack where{40123, kSecret, {"10.0.0.1", "fd00::1"}};
  std::string line = WithoutNewline(FormatConnectBack(where));
  EXPECT_TRUE(IsConnectBack(line));
  EXPECT_EQ(ParseConnectBack(line), where);
  ConnectBack pinned{40123, kSecret, {"10.0.0.9"}, true};
  line = WithoutNewline(FormatConnectBack(pinned));
  EXPECT_EQ(line, "@topolaunch-connect 40123 " + kSecret + " pinned 10.0.0.9");
  EXPECT_EQ(ParseConnectBack(line), pinned);
}

TEST(ConnectBack, MalformedLinesAreRefused) {
  for (const std::string& line : std::vector<std::string>{
           "@topolaunch-connect 0 " + kSecret + " 10.0.0.1",                  // port 0
           "@topolaunch-connect 65536 " + kSecret + " 10.0.0.1",              // port too large
           "@topolaunch-connect 80 " + kSecret,                               // no address
           "@topolaunch-connect 80 " + kSecret.substr(1) + " 10.0.0.1",       // short secret
           "@topolaunch-connect 80 " + kSecret + "0 10.0.0.1",                // long secret
           "@topolaunch-connect 80 " + std::string(64, 'G') + " 10.0.0.1",    // not hex
           "@topolaunch-connect 80 " + kSecret + " host.example.com",         // not numeric
           "@topolaunch-connect 80 " + kSecret + " pinned",                   // pinned to nothing
           "@topolaunch-connect 80 " + kSecret + " pinned 10.0.0.1 10.0.0.2", // pinned to two
           "@topolaunch-connect x80 " + kSecret + " 10.0.0.1",
           "@topolaunch-connect",
           "{\"argv\":[\"true\"]}",
       })
    EXPECT_FALSE(ParseConnectBack(line)) << line;
}

TEST(ConnectBack, TheHandshakeLinesReadBackAsWritten) {
  ConnectHello hello{7, "node7", kNonce, kProof};
  std::string line = WithoutNewline(FormatConnectHello(hello));
  EXPECT_EQ(line, "@topolaunch-hello 7 node7 " + kNonce + " " + kProof);
  EXPECT_EQ(ParseConnectHello(line), hello);
  RunAnswer answer{kProof, kNonce};
  EXPECT_EQ(ParseRunAnswer(WithoutNewline(FormatRunAnswer(answer))), answer);
  EXPECT_EQ(ParseAgentReady(WithoutNewline(FormatAgentReady(kProof))), kProof);
}

TEST(ConnectBack, MalformedHandshakeLinesAreRefused) {
  std::string tail = " " + kNonce + " " + kProof;
  for (const std::string& line : std::vector<std::string>{
           "@topolaunch-hello -1 node1" + tail, "@topolaunch-hello 10000001 node1" + tail, "@topolaunch-hello 1" + tail,
           "@topolaunch-hello 1 node 1" + tail, "@topolaunch-hello 1 node\x01" + tail,
           "@topolaunch-hello 1 node1 " + kNonce,                                  // no proof
           "@topolaunch-hello 1 node1 " + kNonce + " " + kProof.substr(2),         // short proof
           "@topolaunch-hello 1 node1 " + kNonce + " " + std::string(64, 'A'),     // upper case
           "@topolaunch-run " + kNonce + tail})
    EXPECT_FALSE(ParseConnectHello(line)) << line;
  for (const std::string& line : std::vector<std::string>{"@topolaunch-run " + kNonce, "@topolaunch-run " + kNonce + tail,
                                                         "@topolaunch-ready " + kProof})
    EXPECT_FALSE(ParseRunAnswer(line)) << line;
  for (const std::string& line : std::vector<std::string>{"@topolaunch-ready", "@topolaunch-ready " + kProof + " x",
                                                         "@topolaunch-ready " + kProof.substr(1), "@topolaunch-run " + kProof})
    EXPECT_FALSE(ParseAgentReady(line)) << line;
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
  ConnectBack where{40000, kSecret, {"10.0.0.5", "172.17.0.1", "fd00::5"}};
  EXPECT_EQ(AddressesToTry(where, "10.0.0.5"), std::vector<std::string>{"10.0.0.5"});
  EXPECT_EQ(AddressesToTry(where, "10.9.9.9"), std::vector<std::string>{"10.9.9.9"}) << "even when run did not list it";
  EXPECT_EQ(AddressesToTry(where, ""), where.addresses);
  EXPECT_EQ(AddressesToTry(where, "login node"), where.addresses) << "not an address: the advertised list";
}

TEST(AddressesToTry, APinnedAddressWinsOverSlurms) {
  ConnectBack where{40000, kSecret, {"10.1.0.5"}, true};
  EXPECT_EQ(AddressesToTry(where, "10.0.0.5"), std::vector<std::string>{"10.1.0.5"});
}

}  // namespace
}  // namespace topolaunch
