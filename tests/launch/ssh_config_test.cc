#include "launch/ssh_config.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

constexpr const char* kConfig = R"(# global defaults come first
User fallback-is-not-first

Host node? !node9
  HostName %h.cluster
  Port 2222
  IdentityFile ~/.ssh/id_node

Host node*
  User admin
  IdentityFile "%d/keys/%r key"
  Port 22

Match host foo
  User ignored

Host *
  IdentityFile=~/.ssh/id_ed25519
  User=last
)";

struct ResolveCase {
  std::string host;
  SshHostSettings expected;
};

class ResolveSshHostTest : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveSshHostTest, FirstValueWinsIdentitiesAccumulate) {
  Result<SshConfig> config = ParseSshConfig(kConfig, "config");
  ASSERT_TRUE(config.ok()) << config.error().Message();
  EXPECT_EQ(ResolveSshHost(*config, GetParam().host, "/home/me", "me"), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ResolveSshHostTest,
    ::testing::Values(
        // The block before the first Host applies to every host and comes first.
        ResolveCase{"node1",
                    {"node1.cluster", "fallback-is-not-first", 2222,
                     {"/home/me/.ssh/id_node", "/home/me/keys/fallback-is-not-first key", "/home/me/.ssh/id_ed25519"}}},
        ResolveCase{"node9",  // negated in the first block
                    {std::nullopt, "fallback-is-not-first", 22,
                     {"/home/me/keys/fallback-is-not-first key", "/home/me/.ssh/id_ed25519"}}},
        ResolveCase{"login", {std::nullopt, "fallback-is-not-first", std::nullopt, {"/home/me/.ssh/id_ed25519"}}}));

TEST(ResolveSshHost, WithoutGlobalUser) {
  Result<SshConfig> config = ParseSshConfig("Host a*\n User bob\n IdentityFile %u-%r\nHost *\n User carol\n", "c");
  ASSERT_TRUE(config.ok());
  SshHostSettings a = ResolveSshHost(*config, "alpha", "/h", "me");
  EXPECT_EQ(a.user, "bob");
  EXPECT_EQ(a.identity_files, std::vector<std::string>{"me-bob"});
  EXPECT_EQ(ResolveSshHost(*config, "beta", "/h", "me").user, "carol");
  EXPECT_EQ(ResolveSshHost(SshConfig{}, "x", "/h", "me"), SshHostSettings{});
}

TEST(ParseSshConfig, ReportsEveryProblemWithItsLine) {
  Result<SshConfig> config = ParseSshConfig("Host a\n Port 0\n User\n Port http\n", "/root/.ssh/config");
  ASSERT_FALSE(config.ok());
  ASSERT_EQ(config.error().problems.size(), 3u) << config.error().Message();
  EXPECT_EQ(config.error().problems[0].where, "/root/.ssh/config:2");
  EXPECT_EQ(config.error().problems[1].where, "/root/.ssh/config:3");
  EXPECT_EQ(config.error().problems[2].where, "/root/.ssh/config:4");
}

TEST(MatchesHostPatterns, GlobsAndNegation) {
  EXPECT_TRUE(MatchesHostPatterns({"*"}, "x"));
  EXPECT_TRUE(MatchesHostPatterns({"gpu-??"}, "gpu-01"));
  EXPECT_FALSE(MatchesHostPatterns({"gpu-??"}, "gpu-001"));
  EXPECT_FALSE(MatchesHostPatterns({"*", "!gpu-*"}, "gpu-1"));
  EXPECT_FALSE(MatchesHostPatterns({"!gpu-*"}, "cpu-1"));  // a negation alone matches nothing
  EXPECT_TRUE(MatchesHostPatterns({"NODE1"}, "node1"));
}

TEST(MatchesHostPatterns, StarsReturnToTheirLastChoice) {
  EXPECT_TRUE(MatchesHostPatterns({"a*b*c"}, "axxbyybzc"));
  EXPECT_TRUE(MatchesHostPatterns({"*-ib"}, "node-ib-ib"));
  EXPECT_FALSE(MatchesHostPatterns({"*-ib"}, "node-ib-eth"));
  EXPECT_TRUE(MatchesHostPatterns({"n*?1"}, "n01"));
  EXPECT_FALSE(MatchesHostPatterns({"n*?1"}, "n1"));
  EXPECT_TRUE(MatchesHostPatterns({"***"}, ""));
  EXPECT_FALSE(MatchesHostPatterns({""}, "x"));
}

// A fuzzed config held a Host pattern of 150 stars; matched by trying every
// split per star, it did not finish. Without the fix this test never returns.
TEST(MatchesHostPatterns, ManyStarsCostLinearTime) {
  std::string pattern = "n" + std::string(150, '*') + "node0in";
  std::string host(400, 'n');
  EXPECT_FALSE(MatchesHostPatterns({pattern}, host));
  EXPECT_TRUE(MatchesHostPatterns({pattern}, host + "node0in"));
}

TEST(KnownHostKeyTypes, PlainEntriesForHostAndPort) {
  const char* text =
      "node1,10.0.0.1 ssh-ed25519 AAAA\n"
      "# comment\n"
      "node1 ecdsa-sha2-nistp256 BBBB\n"
      "[node1]:2222 ssh-rsa CCCC\n"
      "|1|salt|hash ssh-rsa DDDD\n"
      "@revoked node1 ssh-rsa EEEE\n"
      "node10 ssh-rsa FFFF\n"
      "node1 ssh-ed25519 GGGG\n";
  EXPECT_EQ(KnownHostKeyTypes(text, "node1", 22), (std::vector<std::string>{"ssh-ed25519", "ecdsa-sha2-nistp256"}));
  EXPECT_EQ(KnownHostKeyTypes(text, "10.0.0.1", 22), (std::vector<std::string>{"ssh-ed25519"}));
  EXPECT_EQ(KnownHostKeyTypes(text, "node1", 2222), (std::vector<std::string>{"ssh-rsa"}));
  EXPECT_TRUE(KnownHostKeyTypes(text, "node2", 22).empty());
}

}  // namespace
}  // namespace topolaunch
