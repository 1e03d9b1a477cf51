#include "launch/command.h"

#include <gtest/gtest.h>

#include "launch/executor.h"

#include <algorithm>
#include <string>
#include <vector>

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

TEST(RenderShellCommand, UnsetComesBeforeExport) {
  Command command{{"srun"}, {{"A", "1"}}, "", {"SLURM_GPUS_PER_TASK", "SLURM_CPUS_PER_TASK"}};
  Result<std::string> line = RenderShellCommand(command);
  ASSERT_TRUE(line.ok()) << line.error().Message();
  EXPECT_EQ(*line, "unset 'SLURM_GPUS_PER_TASK' && unset 'SLURM_CPUS_PER_TASK' && export 'A=1' && exec 'srun'");
  command.unset.push_back("X;rm");
  EXPECT_FALSE(RenderShellCommand(command).ok()) << "a name that is not a name";
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

TEST(LineSplitter, CarriageReturnsEndLinesSoProgressBarsShow) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  splitter.Feed("\r 10%|#\r 20%|##", emit);
  splitter.Feed("\r", emit);
  splitter.Feed("\nwindows\r", emit);
  splitter.Feed("\n\nlast", emit);
  splitter.Flush(emit);
  EXPECT_EQ(lines, (std::vector<std::string>{" 10%|#", " 20%|##", "windows", "", "last"}));
}

TEST(LineSplitter, CutsALongLineOnceAndKeepsTheNext) {
  LineSplitter splitter(8);
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  splitter.Feed("0123", emit);
  splitter.Feed("456789abcdef", emit);
  splitter.Feed("ghij\nnext\n12345678\n", emit);
  std::string cut = "01234567" + std::string(LineSplitter::kCutMarker);
  EXPECT_EQ(lines, (std::vector<std::string>{cut, "next", "12345678"}));
  lines.clear();
  splitter.Feed("caf\xC3\xA9\xC3\xA9\xC3\xA9\n", emit);  // the cut falls inside the third "é"
  splitter.Feed("abcd\xC3\xA9\xC3\xA9z\n", emit);           // ... right after a whole one
  splitter.Feed("ab\xC3\xA9\xC3\xA9\xC3\xA9\n", emit);       // exactly the limit: whole
  std::string marker(LineSplitter::kCutMarker);
  EXPECT_EQ(lines, (std::vector<std::string>{"caf\xC3\xA9\xC3\xA9" + marker, "abcd\xC3\xA9\xC3\xA9" + marker,
                                             "ab\xC3\xA9\xC3\xA9\xC3\xA9"}));
}

TEST(LineSplitter, SplitsALongLineIntoMarkedPiecesLosingNothing) {
  LineSplitter splitter(8, LineSplitter::LongLines::kSplit);
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  splitter.Feed("0123", emit);
  splitter.Feed("456789abcdef", emit);
  splitter.Feed("ghij\nnext\n", emit);
  std::string marker(LineSplitter::kSplitMarker);
  EXPECT_EQ(lines, (std::vector<std::string>{"01234567" + marker, "89abcdef" + marker, "ghij", "next"}));
  lines.clear();
  splitter.Feed("caf\xC3\xA9\xC3\xA9\xC3\xA9!", emit);  // the split falls inside the third "é": it moves on whole
  splitter.Flush(emit);                                 // and a last line without a newline still comes
  EXPECT_EQ(lines, (std::vector<std::string>{"caf\xC3\xA9\xC3\xA9" + marker, "\xC3\xA9!"}));
  lines.clear();
  LineSplitter tiny(1, LineSplitter::LongLines::kSplit);  // shorter than a character: no endless loop
  tiny.Feed("\xC3\xA9\n", emit);
  EXPECT_EQ(lines.size(), 2u);
}

// A rank writing 400 MB without a newline: the splitter holds at most its
// limit, and the next line comes through whole.
TEST(LineSplitter, A400MegabyteLineCostsTheLimitOnly) {
  LineSplitter splitter;
  size_t emitted = 0, longest = 0;
  std::vector<std::string> short_lines;
  auto emit = [&](std::string_view l) {
    ++emitted;
    longest = std::max(longest, l.size());
    if (l.size() < 100) short_lines.emplace_back(l);
  };
  std::string chunk(64 * 1024, 'x');
  for (int i = 0; i < 400 * 16; ++i) splitter.Feed(chunk, emit);
  splitter.Feed("\nafter\n", emit);
  EXPECT_EQ(emitted, 2u);
  EXPECT_EQ(longest, LineSplitter::kDefaultMaxLine + LineSplitter::kCutMarker.size());
  EXPECT_EQ(short_lines, (std::vector<std::string>{"after"}));
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
