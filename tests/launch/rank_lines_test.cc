#include "launch/rank_lines.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(RankLines, HelloRoundTripsAndAnythingElseIsRefused) {
  std::string hello = FormatRankHello({12, 4}, OutputStream::kStderr);
  EXPECT_EQ(hello, "topolaunch-rank 12 4 err\n");
  std::optional<RankHello> parsed = ParseRankHello(std::string_view(hello).substr(0, hello.size() - 1));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->label, (RankLabel{12, 4}));
  EXPECT_EQ(parsed->stream, OutputStream::kStderr);
  EXPECT_EQ(ParseRankHello("topolaunch-rank 0 0 out")->stream, OutputStream::kStdout);
  for (std::string_view bad : {"", "topolaunch-rank", "topolaunch-rank 1 0", "topolaunch-rank 1 0 both",
                               "topolaunch-rank 1 2 out",          // a local rank above the rank
                               "topolaunch-rank -1 0 out", "topolaunch-rank +1 0 out", "topolaunch-rank 1  0 out",
                               "topolaunch-rank 99999999999 0 out", "topolaunch-rank 10000001 0 out",
                               "topolaunch-rank 1 0 out ", "hello 1 0 out"})
    EXPECT_FALSE(ParseRankHello(bad)) << bad;
}

TEST(RankLines, LabelledLinesRoundTripAndTheNodesOwnStayWhole) {
  std::string line = FormatRankLine({7, 3}, "loss 0.25: ok");
  RankLine parsed = ParseRankLine(line);
  EXPECT_EQ(parsed.label, (RankLabel{7, 3}));
  EXPECT_EQ(parsed.text, "loss 0.25: ok");
  EXPECT_EQ(ParseRankLine(FormatRankLine({0, 0}, "")).text, "");
  for (std::string_view own : {"torchrun says hi", "7 3 text", "\x1e", "\x1e" "7 text", "\x1e" "7 8 text", "\x1ex 3 text"}) {
    RankLine whole = ParseRankLine(own);
    EXPECT_EQ(whole.label.rank, -1) << own;
    EXPECT_EQ(whole.text, own);
  }
}

TEST(RankSet, ParsesListsAndRangesAndNamesWhatIsWrong) {
  Result<RankSet> set = RankSet::Parse("16,0-3,2-5,9", "--ranks-output");
  ASSERT_TRUE(set.ok()) << set.error().Message();
  for (int rank : {0, 1, 5, 9, 16}) EXPECT_TRUE(set->Contains(rank)) << rank;
  for (int rank : {-1, 6, 8, 10, 15, 17}) EXPECT_FALSE(set->Contains(rank)) << rank;
  EXPECT_EQ(set->Highest(), 16);
  for (std::string_view bad : {"", "a", "1,", "3-1", "1-", "-1", "0-99999999", "1 2"}) {
    Result<RankSet> refused = RankSet::Parse(bad, "--ranks-output");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kBadUsage);
    EXPECT_NE(refused.error().Message().find("--ranks-output"), std::string::npos) << refused.error().Message();
  }
}

}  // namespace
}  // namespace topolaunch
