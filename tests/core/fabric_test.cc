#include <gtest/gtest.h>

#include "topolaunch/fabric.h"

namespace topolaunch {
namespace {

TEST(Guid, FormatsLowercaseSixteenDigits) {
  EXPECT_EQ(FormatGuid(0x2c90300a1b2c3), "0x0002c90300a1b2c3");
  EXPECT_EQ(FormatGuid(0), "0x0000000000000000");
  EXPECT_EQ(FormatGuid(~Guid{0}), "0xffffffffffffffff");
}

TEST(Guid, ParsesWithOrWithoutPrefix) {
  EXPECT_EQ(ParseGuid("0x0002C90300a1b2c3"), Guid{0x2c90300a1b2c3});
  EXPECT_EQ(ParseGuid("8f10403960558"), Guid{0x8f10403960558});
  EXPECT_EQ(ParseGuid(""), std::nullopt);
  EXPECT_EQ(ParseGuid("0x"), std::nullopt);
  EXPECT_EQ(ParseGuid("0x00000000000000001"), std::nullopt);  // 17 digits
  EXPECT_EQ(ParseGuid("12g4"), std::nullopt);
}

struct RateCase {
  std::string token;
  std::string width, speed;
  double gbps;
};

class LinkRates : public ::testing::TestWithParam<RateCase> {};

TEST_P(LinkRates, MatchIbstat) {
  const RateCase& c = GetParam();
  auto split = SplitWidthSpeed(c.token);
  ASSERT_TRUE(split.has_value()) << c.token;
  EXPECT_EQ(split->first, c.width);
  EXPECT_EQ(split->second, c.speed);
  EXPECT_EQ(LinkRateGbps(split->first, split->second), c.gbps);
}

INSTANTIATE_TEST_SUITE_P(Tokens, LinkRates,
                         ::testing::Values(RateCase{"4xSDR", "4X", "SDR", 10}, RateCase{"1xSDR", "1X", "SDR", 2.5},
                                           RateCase{"4xDDR", "4X", "DDR", 20}, RateCase{"4xQDR", "4X", "QDR", 40},
                                           RateCase{"4xFDR10", "4X", "FDR10", 40}, RateCase{"4xFDR", "4X", "FDR", 56},
                                           RateCase{"4xEDR", "4X", "EDR", 100}, RateCase{"4xHDR", "4X", "HDR", 200},
                                           RateCase{"2xNDR", "2X", "NDR", 200}, RateCase{"4xNDR", "4X", "NDR", 400},
                                           RateCase{"12xQDR", "12X", "QDR", 120}, RateCase{"4xXDR", "4X", "XDR", 800}));

TEST(LinkRates, RejectsUnknownTokens) {
  EXPECT_EQ(SplitWidthSpeed("4x???"), std::nullopt);
  EXPECT_EQ(SplitWidthSpeed("xHDR"), std::nullopt);
  EXPECT_EQ(SplitWidthSpeed("3xHDR"), std::nullopt);
  EXPECT_EQ(SplitWidthSpeed("lid"), std::nullopt);
  EXPECT_EQ(LinkRateGbps("4X", ""), std::nullopt);
}

}  // namespace
}  // namespace topolaunch
