#include "env/rail_join.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::HandTopology;

// Two units of two hosts, mlx5_0 on the unit's rail-0 leaf and mlx5_1 on its
// rail-1 leaf (leaves 0x1<unit><rail>); the caller cables what is above.
HandTopology TwoRails() {
  HandTopology t;
  for (int unit = 0; unit < 2; ++unit)
    for (int rail = 0; rail < 2; ++rail) t.Switch(0x100 + unit * 16 + rail, fmt::format("su{}-r{}", unit, rail), 1);
  for (int h = 0; h < 4; ++h) {
    Guid unit = h / 2;
    t.Hca(fmt::format("gpu{}", h), 0xa00 + h * 2, "mlx5_0", 0x100 + unit * 16);
    t.Hca(fmt::format("gpu{}", h), 0xa01 + h * 2, "mlx5_1", 0x101 + unit * 16);
  }
  return t;
}

TEST(RailJoin, SeparatePlanesAreNotJoinedAtAll) {
  RailJoin join = JudgeRailJoin(testing::MultiRailTopology());
  EXPECT_TRUE(join.slow);
  EXPECT_NE(join.detail.find("not joined at all"), std::string::npos) << join.detail;
}

TEST(RailJoin, ASharedSpineJoinsAtFullBandwidth) {
  HandTopology t = TwoRails();
  t.Switch(0x200, "spine", 2);
  for (Guid leaf : {0x100, 0x101, 0x110, 0x111}) t.Cable(leaf, 0x200);
  RailJoin join = JudgeRailJoin(t.Build());
  EXPECT_FALSE(join.slow) << join.detail;
}

TEST(RailJoin, RailSpinesUnderACoreAreJudgedByBandwidth) {
  for (int core_cables : {2, 1}) {
    SCOPED_TRACE(core_cables);
    HandTopology t = TwoRails();
    t.Switch(0x200, "spine-r0", 2).Switch(0x201, "spine-r1", 2).Switch(0x300, "core", 3);
    for (Guid leaf : {0x100, 0x110}) t.Cable(leaf, 0x200);  // 400 Gb/s up per rail
    for (Guid leaf : {0x101, 0x111}) t.Cable(leaf, 0x201);
    for (int i = 0; i < core_cables; ++i) t.Cable(0x200, 0x300).Cable(0x201, 0x300);
    RailJoin join = JudgeRailJoin(t.Build());
    EXPECT_EQ(join.slow, core_cables == 1) << join.detail;
    if (join.slow) EXPECT_NE(join.detail.find("200 Gb/s on toward the other rails for the 400 Gb/s"), std::string::npos) << join.detail;
  }
}

TEST(RailJoin, OneRailJudgesNothing) {
  EXPECT_FALSE(JudgeRailJoin(testing::TwoLevelTopology()).slow);
}

}  // namespace
}  // namespace topolaunch
