#include "core/hostfile.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(HostfileTest, ReadsTheDeepSpeedShape) {
  Result<std::vector<HostfileEntry>> entries =
      ParseHostfile("# training hosts\nnode017 slots=8\n\n  node018   # spare\nnode2 slots=4 max_slots=8\r\n", "hosts.txt");
  ASSERT_TRUE(entries.ok()) << entries.error().Message();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0], (HostfileEntry{"node017", 8, 2}));
  EXPECT_EQ((*entries)[1], (HostfileEntry{"node018", std::nullopt, 4}));
  EXPECT_EQ((*entries)[2], (HostfileEntry{"node2", 4, 5}));
}

TEST(HostfileTest, ReportsEveryBadLine) {
  struct Case {
    std::string text;
    std::vector<std::string> wheres;
    std::string mentions;
  };
  std::vector<Case> cases = {
      {"node1 slots=x\n", {"h:1"}, "slots="},
      {"node1 slots=0\n", {"h:1"}, "1..65536"},
      {"node1 gpus=4\n", {"h:1"}, "unexpected \"gpus=4\""},
      {"node$1\n", {"h:1"}, "not a host name"},
      {"node1\nnode2\nnode1 slots=2\n", {"h:3"}, "first on line 1"},
      {"a slots=\nb bogus\n", {"h:1", "h:2"}, ""},
  };
  for (const Case& c : cases) {
    Result<std::vector<HostfileEntry>> entries = ParseHostfile(c.text, "h");
    ASSERT_FALSE(entries.ok()) << c.text;
    EXPECT_EQ(entries.error().code, ErrorCode::kBadInput);
    std::vector<std::string> wheres;
    for (const Problem& p : entries.error().problems) wheres.push_back(p.where);
    EXPECT_EQ(wheres, c.wheres) << c.text;
    EXPECT_NE(entries.error().Message().find(c.mentions), std::string::npos) << entries.error().Message();
  }
}

TEST(HostfileTest, EmptyFileGivesNoHosts) {
  Result<std::vector<HostfileEntry>> entries = ParseHostfile("# nothing\n\n", "h");
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(entries->empty());
}

}  // namespace
}  // namespace topolaunch
