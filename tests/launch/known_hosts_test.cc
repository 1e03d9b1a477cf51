#include "launch/known_hosts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace topolaunch {
namespace {

TEST(ParseKnownHosts, SortsEntriesByMarkerAndKeepsLineNumbers) {
  std::string text =
      "# a comment\n"
      "\n"
      "node1,10.0.0.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA1 comment here\r\n"
      "@revoked * ssh-ed25519 AAAAREVOKED\n"
      "@cert-authority *.example.com ssh-ed25519 AAAACA\n"
      "[node2]:2222 ecdsa-sha2-nistp256 AAAAE2";
  Result<KnownHostsFile> file = ParseKnownHosts(text, "known_hosts");
  ASSERT_TRUE(file.ok()) << file.error().Message();
  ASSERT_EQ(file->plain.size(), 2u);
  EXPECT_EQ(file->plain[0].line, 3u);
  EXPECT_EQ(file->plain[0].text, "node1,10.0.0.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA1 comment here");
  EXPECT_EQ(file->plain[0].patterns, (std::vector<std::string>{"node1", "10.0.0.1"}));
  EXPECT_EQ(file->plain[1].line, 6u);
  EXPECT_EQ(file->plain[1].key_type, "ecdsa-sha2-nistp256");
  ASSERT_EQ(file->revoked.size(), 1u);
  EXPECT_EQ(file->revoked[0].line, 4u);
  EXPECT_EQ(file->revoked[0].key_base64, "AAAAREVOKED");
  ASSERT_EQ(file->authorities.size(), 1u);
  EXPECT_EQ(file->authorities[0].patterns, (std::vector<std::string>{"*.example.com"}));
}

TEST(ParseKnownHosts, ALongLineIsOneLine) {
  std::string comment = "# " + std::string(10'000, 'x') + "\n";
  std::string entry = "node1 ssh-ed25519 AAAA" + std::string(6'000, 'B') + "\n";
  Result<KnownHostsFile> file = ParseKnownHosts(comment + entry + "node2 ssh-ed25519 AAAAC\n", "kh");
  ASSERT_TRUE(file.ok()) << file.error().Message();
  ASSERT_EQ(file->plain.size(), 2u);
  EXPECT_EQ(file->plain[0].key_base64.size(), 6'004u);
  EXPECT_EQ(file->plain[1].line, 3u);
}

TEST(ParseKnownHosts, EveryBadLineIsNamed) {
  Result<KnownHostsFile> file = ParseKnownHosts("node1 ssh-ed25519\n@trusted * ssh-ed25519 AAAA\nok ssh-ed25519 AAAA\n@revoked x\n", "kh");
  ASSERT_FALSE(file.ok());
  ASSERT_EQ(file.error().problems.size(), 3u);
  EXPECT_EQ(file.error().problems[0].where, "kh:1");
  EXPECT_EQ(file.error().problems[1].where, "kh:2");
  EXPECT_NE(file.error().problems[1].what.find("unknown marker @trusted"), std::string::npos);
  EXPECT_EQ(file.error().problems[2].where, "kh:4");
}

struct PatternCase {
  std::vector<std::string> patterns;
  std::string host;
  int port;
  bool matches;
};

class HostMatchesPatternsTest : public ::testing::TestWithParam<PatternCase> {};

TEST_P(HostMatchesPatternsTest, AsOpenSsh) {
  const PatternCase& c = GetParam();
  EXPECT_EQ(HostMatchesPatterns(c.patterns, c.host, c.port), c.matches);
}

INSTANTIATE_TEST_SUITE_P(
    Table, HostMatchesPatternsTest,
    ::testing::Values(PatternCase{{"node1"}, "node1", 22, true}, PatternCase{{"node1"}, "node10", 22, false},
                      PatternCase{{"node*"}, "node10", 22, true}, PatternCase{{"node?"}, "node10", 22, false},
                      PatternCase{{"*.example.com"}, "gpu1.example.com", 22, true},
                      PatternCase{{"*.example.com", "!bad.example.com"}, "bad.example.com", 22, false},
                      PatternCase{{"!bad.example.com", "*.example.com"}, "bad.example.com", 22, false},
                      PatternCase{{"!bad.example.com"}, "good.example.com", 22, false},
                      PatternCase{{"[node1]:2222"}, "node1", 2222, true}, PatternCase{{"node1"}, "node1", 2222, false},
                      PatternCase{{"[10.200.0.*]:*"}, "10.200.0.7", 2200, true},
                      PatternCase{{"|1|abc=|def="}, "node1", 22, false}, PatternCase{{"*"}, "anything", 22, true}));

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64(std::string("\x00\xff\xfe", 3)), "AP/+");
}

}  // namespace
}  // namespace topolaunch
