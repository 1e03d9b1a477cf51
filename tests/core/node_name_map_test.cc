#include <gtest/gtest.h>

#include "topolaunch/topology.h"

namespace topolaunch {
namespace {

TEST(ParseNodeNameMap, ReadsInfinibandDiagsFormat) {
  Result<NodeNameMap> map = ParseNodeNameMap(
      "# generated\n"
      "0x0002c90300a1b2c3 \"node017 mlx5_0\"\n"
      "\n"
      "0008f10400410015   \"spine-1\"   # comment\r\n"
      "0x0002C90300A1B2C3 \"node018 mlx5_0\"\n",
      "map.txt");
  ASSERT_TRUE(map.ok()) << map.error().Message();
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ(map->at(0x0002c90300a1b2c3), "node018 mlx5_0");  // later line wins, as in libibnetdisc
  EXPECT_EQ(map->at(0x0008f10400410015), "spine-1");
}

TEST(ParseNodeNameMap, ReportsEveryBadLineWithItsNumber) {
  Result<NodeNameMap> map = ParseNodeNameMap(
      "0xzz \"a\"\n"
      "0x1 b\n"
      "0x2 \"unterminated\n"
      "0x3 \"ok\"\n"
      "0x4 \"\"\n"
      "0x5 \"x\" trailing\n",
      "map.txt");
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.error().code, ErrorCode::kBadInput);
  ASSERT_EQ(map.error().problems.size(), 5u);
  EXPECT_EQ(map.error().problems[0].where, "map.txt:1");
  EXPECT_EQ(map.error().problems[1].where, "map.txt:2");
  EXPECT_EQ(map.error().problems[2].where, "map.txt:3");
  EXPECT_EQ(map.error().problems[3].where, "map.txt:5");
  EXPECT_EQ(map.error().problems[4].where, "map.txt:6");
  EXPECT_NE(map.error().problems[0].what.find("not a GUID"), std::string::npos);
}

TEST(ParseNodeNameMap, EmptyFileIsAnEmptyMap) {
  Result<NodeNameMap> map = ParseNodeNameMap("", "empty");
  ASSERT_TRUE(map.ok());
  EXPECT_TRUE(map->empty());
}

}  // namespace
}  // namespace topolaunch
