#include <gtest/gtest.h>

#include <algorithm>

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

// Every node of a fabric is found, in GUID order (a live walk's, a cache's)
// and in any other (a text dump's); a GUID it does not hold is not.
TEST(Fabric, FindNodeFindsEveryNodeInAnyOrder) {
  Fabric fabric;
  for (Guid g = 1; g <= 100; ++g) fabric.nodes.push_back({NodeType::kCa, g * 7, 0, "n", 1, {}});
  for (int pass = 0; pass < 2; ++pass) {
    for (const FabricNode& node : fabric.nodes) {
      const FabricNode* found = fabric.FindNode(node.guid);
      ASSERT_NE(found, nullptr) << FormatGuid(node.guid) << (pass ? " (another order)" : " (in GUID order)");
      EXPECT_EQ(found, &node);
    }
    EXPECT_EQ(fabric.FindNode(3), nullptr);
    EXPECT_EQ(fabric.FindNode(701), nullptr);
    // Another order: every third node moved to the front.
    std::stable_partition(fabric.nodes.begin(), fabric.nodes.end(), [](const FabricNode& n) { return n.guid % 3 == 0; });
  }
}

}  // namespace
}  // namespace topolaunch
