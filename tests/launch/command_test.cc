#include "launch/command.h"

#include <gtest/gtest.h>

#include "launch/executor.h"

namespace topolaunch {
namespace {

struct QuoteCase {
  std::string argument;
  std::string quoted;
};

class ShellQuoteTest : public ::testing::TestWithParam<QuoteCase> {};

TEST_P(ShellQuoteTest, SingleQuotesEverything) { EXPECT_EQ(ShellQuote(GetParam().argument), GetParam().quoted); }

INSTANTIATE_TEST_SUITE_P(
    Table, ShellQuoteTest,
    ::testing::Values(QuoteCase{"", "''"}, QuoteCase{"plain", "'plain'"}, QuoteCase{"two words", "'two words'"},
                      QuoteCase{"it's", "'it'\\''s'"}, QuoteCase{"'", "''\\'''"},
                      QuoteCase{"$HOME;rm -rf /", "'$HOME;rm -rf /'"}, QuoteCase{"a\nb", "'a\nb'"},
                      QuoteCase{"\\\"`", "'\\\"`'"}, QuoteCase{"--lr=3e-4", "'--lr=3e-4'"}));

TEST(RenderShellCommand, CwdEnvAndExec) {
  Command command{{"python3", "train.py", "a b"}, {{"RANK", "0"}, {"MSG", "it's"}}, "/work dir"};
  Result<std::string> line = RenderShellCommand(command);
  ASSERT_TRUE(line.ok()) << line.error().Message();
  EXPECT_EQ(*line, "cd '/work dir' && export 'RANK=0' && export 'MSG=it'\\''s' && exec 'python3' 'train.py' 'a b'");
}

TEST(RenderShellCommand, ArgvOnly) {
  Result<std::string> line = RenderShellCommand(Command{{"hostname"}, {}, ""});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, "exec 'hostname'");
}

TEST(RenderShellCommand, ReportsEveryProblem) {
  Command command{{std::string("a\0b", 3)}, {{"1BAD", "x"}, {"OK", std::string("\0", 1)}, {"A-B", ""}}, ""};
  Result<std::string> line = RenderShellCommand(command);
  ASSERT_FALSE(line.ok());
  EXPECT_EQ(line.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(line.error().problems.size(), 4u) << line.error().Message();
  EXPECT_FALSE(RenderShellCommand(Command{}).ok());
}

struct HostCase {
  std::string host;
  bool ok;
};

class CheckRemoteHostTest : public ::testing::TestWithParam<HostCase> {};

TEST_P(CheckRemoteHostTest, AcceptsHostNamesAndAddressesOnly) {
  Status status = CheckRemoteHost(GetParam().host);
  EXPECT_EQ(status.ok(), GetParam().ok) << GetParam().host;
  if (!status.ok()) {
    EXPECT_EQ(status.error().code, ErrorCode::kBadInput);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckRemoteHostTest,
    ::testing::Values(HostCase{"node01", true}, HostCase{"gpu-a.cluster.example", true},
                      HostCase{"10.200.0.2", true}, HostCase{"", false}, HostCase{"-oProxyCommand=x", false},
                      HostCase{"node 1", false}, HostCase{"node;rm", false}, HostCase{"user@node", false},
                      HostCase{"node$(id)", false}, HostCase{"a\nb", false}));

TEST(LineSplitter, SplitsAcrossChunksAndFlushesTheTail) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  splitter.Feed("one\ntw", emit);
  splitter.Feed("o\n\nthr", emit);
  splitter.Flush(emit);
  splitter.Flush(emit);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "", "thr"}));
}

TEST(StdinQueue, KeepsOrderAcrossPartialWritesAndRefusesAfterClose) {
  StdinQueue queue(true);
  std::string pending = "abc";
  size_t written = 2;  // the pump wrote "ab" so far
  ASSERT_TRUE(queue.Append("de"));
  ASSERT_TRUE(queue.Append("f"));
  EXPECT_FALSE(queue.TakeInto(pending, written));
  EXPECT_EQ(pending, "cdef");
  EXPECT_EQ(written, 0u);
  queue.RequestClose();
  EXPECT_FALSE(queue.Append("g"));
  EXPECT_TRUE(queue.TakeInto(pending, written));
  EXPECT_EQ(pending, "cdef");

  StdinQueue closed(false);  // close_stdin requests
  EXPECT_FALSE(closed.Append("x"));
  StdinQueue ended(true);
  ASSERT_TRUE(ended.Append("lost"));
  ended.MarkClosed();  // the command ended: queued bytes are dropped
  std::string rest;
  size_t none = 0;
  EXPECT_FALSE(ended.TakeInto(rest, none));
  EXPECT_EQ(rest, "");
  EXPECT_FALSE(ended.Append("y"));
}

TEST(ExitInfo, Describes) {
  EXPECT_EQ(ExitInfo{.exit_code = 3}.Describe(), "exit 3");
  ExitInfo killed;
  killed.signal = "KILL";
  EXPECT_EQ(killed.Describe(), "signal KILL");
  ExitInfo lost;
  lost.connection_lost = true;
  EXPECT_EQ(lost.Describe(), "connection lost");
}

}  // namespace
}  // namespace topolaunch
