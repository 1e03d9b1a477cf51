// SrunPortRange from `scontrol show config` (srun_port_range.h).
#include "launch/srun_port_range.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(ParseSrunPortRange, TheRangeOfItsLine) {
  Result<std::optional<PortRange>> range =
      ParseSrunPortRange("SlurmdUser              = root(0)\nSrunPortRange           = 60001-63000\nSrunProlog = (null)\n");
  ASSERT_TRUE(range.ok()) << range.error().Message();
  EXPECT_EQ(*range, (PortRange{60001, 63000}));
  EXPECT_EQ(FormatPortRange(**range), "60001-63000");
}

TEST(ParseSrunPortRange, NoneWhenUnsetOrZero) {
  for (const char* text : {"", "SrunProlog = (null)\n", "SrunPortRange           = 0-0\n"}) {
    Result<std::optional<PortRange>> range = ParseSrunPortRange(text);
    ASSERT_TRUE(range.ok()) << text;
    EXPECT_FALSE(*range) << text;
  }
}

TEST(ParseSrunPortRange, AMalformedRangeIsAnErrorNamingIt) {
  for (const char* value : {"60001", "63000-60001", "1-70000", "a-b", "0-10", "-5"}) {
    Result<std::optional<PortRange>> range = ParseSrunPortRange(std::string("SrunPortRange = ") + value + "\n");
    ASSERT_FALSE(range.ok()) << value;
    EXPECT_NE(range.error().Message().find(std::string("SrunPortRange is \"") + value + "\""), std::string::npos)
        << range.error().Message();
  }
}

}  // namespace
}  // namespace topolaunch
