#include "discover/ib_link_names.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(IbLinkWidthName, NamesEveryActiveWidthCode) {
  struct Case { unsigned code; std::string_view name; };
  for (Case c : {Case{1, "1X"}, {2, "4X"}, {4, "8X"}, {8, "12X"}, {16, "2X"}, {0, ""}, {3, ""}, {255, ""}})
    EXPECT_EQ(IbLinkWidthName(c.code), c.name) << "code " << c.code;
}

TEST(IbLinkSpeedName, FollowsIbnetdiscoverRules) {
  struct Case { unsigned speed, ext; bool fdr10; std::string_view name; };
  const Case cases[] = {
      {1, 0, false, "SDR"},  {2, 0, false, "DDR"},   {4, 0, false, "QDR"},
      {4, 0, true, "FDR10"},                 // the Mellanox bit on a QDR-coded port
      {2, 0, true, "DDR"},                   // ... and only there
      {4, 1, false, "FDR"},  {4, 2, false, "EDR"},   {4, 4, false, "HDR"},
      {4, 8, false, "NDR"},  {4, 32, false, "XDR"},
      {1, 4, false, "HDR"},                  // an extended code wins over the basic one
      {4, 2, true, "EDR"},                   // ... and over FDR10
      {0, 0, false, ""},     {8, 0, false, ""},     {4, 16, false, ""},
  };
  for (const Case& c : cases)
    EXPECT_EQ(IbLinkSpeedName(c.speed, c.ext, c.fdr10), c.name) << c.speed << "/" << c.ext << "/" << c.fdr10;
}

TEST(IbPortStateName, NamesTheFourStates) {
  struct Case { unsigned code; std::string_view name; };
  for (Case c : {Case{1, "Down"}, {2, "Init"}, {3, "Armed"}, {4, "Active"}, {0, ""}, {5, ""}})
    EXPECT_EQ(IbPortStateName(c.code), c.name) << "code " << c.code;
}

}  // namespace
}  // namespace topolaunch
