// Expected values below were observed with Slurm 22.05.8's
// `scontrol show hostnames` / `scontrol show hostlist`; the system test
// tests/cli/hostlist_cli_test.cc checks the same behaviour against scontrol.
#include "core/hostlist.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using Names = std::vector<std::string>;

struct ExpandCase {
  const char* expression;
  Names expected;
};

class ExpandTest : public ::testing::TestWithParam<ExpandCase> {};

TEST_P(ExpandTest, MatchesScontrolShowHostnames) {
  const ExpandCase& c = GetParam();
  Result<Names> names = ExpandHostList(c.expression);
  ASSERT_TRUE(names.ok()) << names.error().Message();
  EXPECT_EQ(*names, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Observed, ExpandTest,
    ::testing::Values(
        ExpandCase{"node1", {"node1"}},
        ExpandCase{"node[1-3,7]", {"node1", "node2", "node3", "node7"}},
        ExpandCase{"node[01-03]", {"node01", "node02", "node03"}},
        ExpandCase{"node[9-11]", {"node9", "node10", "node11"}},
        ExpandCase{"node[08-10]", {"node08", "node09", "node10"}},
        ExpandCase{"node[8-010]", {"node8", "node9", "node10"}},  // width of the lower bound
        ExpandCase{"node[001-3]", {"node001", "node002", "node003"}},
        ExpandCase{"node[007]", {"node007"}},
        ExpandCase{"node[0-0]", {"node0"}},
        ExpandCase{"node[1-]", {"node1"}},  // Slurm reads "N-" as N
        ExpandCase{"n[3,1,2]", {"n3", "n1", "n2"}},
        ExpandCase{"n[1,1]", {"n1", "n1"}},
        ExpandCase{"n[1-3,2-4]", {"n1", "n2", "n3", "n2", "n3", "n4"}},
        ExpandCase{"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
        // Slurm's recursion: last group fastest, then the first, the middle slowest.
        ExpandCase{"a[1-2]b[3-4]c[5-6]",
                   {"a1b3c5", "a1b3c6", "a2b3c5", "a2b3c6", "a1b4c5", "a1b4c6", "a2b4c5", "a2b4c6"}},
        ExpandCase{"a[1-2]b[3]c[4]d[5-6]", {"a1b3c4d5", "a1b3c4d6", "a2b3c4d5", "a2b3c4d6"}},
        ExpandCase{"a[1-2].b[3]", {"a1.b3", "a2.b3"}},
        ExpandCase{"node1-[1-2]", {"node1-1", "node1-2"}},
        ExpandCase{"[1-2]", {"1", "2"}},
        ExpandCase{"gpu_a-1.ib", {"gpu_a-1.ib"}},
        ExpandCase{"a,b,c", {"a", "b", "c"}},
        ExpandCase{"a b\tc", {"a", "b", "c"}},
        ExpandCase{" ,a,, b ,", {"a", "b"}},
        ExpandCase{"n1,n1,n2", {"n1", "n1", "n2"}},
        ExpandCase{"n[1-2],m[3-4]", {"n1", "n2", "m3", "m4"}},
        ExpandCase{"node[01-02],gpu-[1-2]", {"node01", "node02", "gpu-1", "gpu-2"}},
        ExpandCase{"n[18446744073709551614]", {"n18446744073709551614"}},
        ExpandCase{"", {}},
        ExpandCase{",, ,", {}}));

TEST(ExpandHostList, LargestRangeSlurmAcceptsIsExpanded) {
  Result<Names> names = ExpandHostList("n[1-65536]");
  ASSERT_TRUE(names.ok()) << names.error().Message();
  ASSERT_EQ(names->size(), 65536u);
  EXPECT_EQ(names->front(), "n1");
  EXPECT_EQ(names->back(), "n65536");
}

TEST(ExpandHostList, ExactlyTheLimitIsAllowed) {
  Result<Names> names = ExpandHostList("x[1-1000]y[1-1000]");
  ASSERT_TRUE(names.ok()) << names.error().Message();
  ASSERT_EQ(names->size(), kMaxExpandedHosts);
  EXPECT_EQ((*names)[1000], "x2y1");
}

struct ErrorCase {
  const char* expression;
  const char* message_part;  // must appear in the message
};

class ExpandErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExpandErrorTest, IsBadInputNamingThePart) {
  const ErrorCase& c = GetParam();
  Result<Names> names = ExpandHostList(c.expression);
  ASSERT_FALSE(names.ok()) << "expanded to " << names->size() << " names";
  EXPECT_EQ(names.error().code, ErrorCode::kBadInput);
  std::string message = names.error().Message();
  EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
  std::string shown = std::string(c.expression).substr(0, 40);
  bool printable = std::all_of(shown.begin(), shown.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
  if (printable) {
    EXPECT_NE(message.find(shown), std::string::npos) << "expression not named: " << message;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Rejected, ExpandErrorTest,
    ::testing::Values(
        // scontrol rejects these too ("Invalid hostlist").
        ErrorCase{"rack1-node[1-2]-ib", "\"-ib\" follows the last ']'"},
        ErrorCase{"a[1-2]b", "\"b\" follows the last ']'"},
        ErrorCase{"node[10-8]", "range \"10-8\" runs backwards"},
        ErrorCase{"node[]", "empty range in \"[]\""},
        ErrorCase{"node[1-2,]", "empty range"},
        ErrorCase{"node[,1]", "empty range"},
        ErrorCase{"node[a-b]", "\"a-b\" is not a number"},
        ErrorCase{"node[1--2]", "\"1--2\" is not a number"},
        ErrorCase{"node[-1]", "\"-1\" is not a number"},
        ErrorCase{"node[0x1]", "\"0x1\" is not a number"},
        ErrorCase{"node[[1-2]]", "brackets cannot nest"},
        ErrorCase{"node[1-2]]", "']' at offset 9 closes no '['"},
        ErrorCase{"n[1-65537]", "more than 65536 hosts"},
        ErrorCase{"n[1-999999999]", "more than 65536 hosts"},
        ErrorCase{"a[1-40000,1-40000]b[1]", "limit for a group before the last"},
        // scontrol accepts these and makes names nobody meant; we refuse.
        ErrorCase{"node[", "'[' at offset 4 is never closed"},
        ErrorCase{"[abc", "'[' at offset 0 is never closed"},
        ErrorCase{"node]", "']' at offset 4 closes no '['"},
        ErrorCase{"ok1,n@1", "in \"n@1\": '@' cannot be in a host name"},
        ErrorCase{"n/1", "'/' cannot be in a host name"},
        ErrorCase{"n=1", "'=' cannot be in a host name"},
        ErrorCase{"a\nb", "host list \"a\\x0ab\": control character 0x0a cannot be in a host name"},
        ErrorCase{"n\xc3\xa9", "host list \"n\\xc3\\xa9\": non-ASCII byte 0xc3"},
        ErrorCase{"n[ 1-2]", "\" 1-2\" is not a number"},
        ErrorCase{"n[1a-2]", "\"1a-2\" is not a number"},
        ErrorCase{"n[+1-2]", "\"+1-2\" is not a number"},
        ErrorCase{"n[1-+2]", "\"1-+2\" is not a number"},
        ErrorCase{"n[99999999999999999999]", "number 99999999999999999999 is too large"},
        ErrorCase{"n[18446744073709551615]", "is too large"},
        ErrorCase{"a[x]b[1-2]c[1]", "\"x\" is not a number"},  // scontrol: silently nothing
        ErrorCase{"a[1-70000]b[1-2]c[1]", "more than 65536 hosts"},
        ErrorCase{"x[1-1000]y[1-1001]", "expands to more than 1000000 hosts"},
        ErrorCase{"n[1-60000],m[1-60000]x[1-60000]", "expands to more than 1000000 hosts"},
        ErrorCase{"a[1-60000]b[1-60000]c[1-60000]d[1-60000]", "expands to more than"}));

TEST(ExpandHostList, HugeExpressionMessageIsShort) {
  std::string expression = std::string(100000, 'a') + "[";
  Result<Names> names = ExpandHostList(expression);
  ASSERT_FALSE(names.ok());
  EXPECT_LT(names.error().Message().size(), 400u);
  EXPECT_NE(names.error().Message().find("(100001 characters)"), std::string::npos);
}

TEST(ExpandHostList, ManyTokensCountTowardsOneLimit) {
  std::string expression;
  for (int i = 0; i < 16; ++i) expression += "n[1-65536],";
  Result<Names> names = ExpandHostList(expression);
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.error().Message().find("more than 1000000 hosts"), std::string::npos);
}

struct CompressCase {
  Names hosts;
  const char* expected;
};

class CompressTest : public ::testing::TestWithParam<CompressCase> {};

TEST_P(CompressTest, MatchesScontrolShowHostlist) {
  EXPECT_EQ(CompressHostList(GetParam().hosts), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Observed, CompressTest,
    ::testing::Values(
        CompressCase{{}, ""},
        CompressCase{{"n1"}, "n1"},
        CompressCase{{"n1", "n2", "n3"}, "n[1-3]"},
        CompressCase{{"n3", "n1", "n2"}, "n[3,1-2]"},  // no sorting
        CompressCase{{"n10", "n9"}, "n[10,9]"},
        CompressCase{{"n1", "n1", "n2"}, "n[1,1-2]"},  // duplicates kept
        CompressCase{{"n1", "n2", "n1"}, "n[1-2,1]"},
        CompressCase{{"n1", "n2", "n4", "n5", "n7"}, "n[1-2,4-5,7]"},
        CompressCase{{"n01", "n1"}, "n[01,1]"},
        CompressCase{{"n01", "n02", "n3"}, "n[01-02,3]"},
        CompressCase{{"n9", "n10", "n11"}, "n[9-11]"},
        CompressCase{{"n09", "n10", "n11"}, "n[09-11]"},
        CompressCase{{"n8", "n9", "n010"}, "n[8-9,010]"},
        CompressCase{{"n99", "n100", "n101"}, "n[99-101]"},
        CompressCase{{"n099", "n100"}, "n[099-100]"},
        CompressCase{{"n0099", "n100"}, "n[0099,100]"},
        CompressCase{{"n9", "n010"}, "n[9,010]"},
        CompressCase{{"a", "b", "c"}, "a,b,c"},
        CompressCase{{"a", "a"}, "a,a"},
        CompressCase{{"n", "n1", "n2"}, "n,n[1-2]"},
        CompressCase{{"n1", "m1", "n2"}, "n1,m1,n2"},
        CompressCase{{"x1", "y1", "x2"}, "x1,y1,x2"},
        CompressCase{{"node1", "node2", "rack1-node3"}, "node[1-2],rack1-node3"},
        CompressCase{{"1", "2", "3"}, "[1-3]"},
        CompressCase{{"01", "02", "3"}, "[01-02,3]"},
        CompressCase{{"n1a", "n2a", "n3a"}, "n1a,n2a,n3a"},
        CompressCase{{"n1x2", "n1x3"}, "n1x[2-3]"},
        CompressCase{{"a-1", "a-2"}, "a-[1-2]"},
        CompressCase{{"n1-2", "n1-3"}, "n1-[2-3]"},
        CompressCase{{"n1_2", "n1_3", "n1"}, "n1_[2-3],n1"},
        CompressCase{{"n1.ib", "n2.ib"}, "n1.ib,n2.ib"},
        CompressCase{{"n18446744073709551613", "n18446744073709551614"},
                     "n[18446744073709551613-18446744073709551614]"},
        // Deliberate: Slurm would print n18446744073709551615 for both.
        CompressCase{{"n18446744073709551615", "n99999999999999999999"},
                     "n18446744073709551615,n99999999999999999999"}));

TEST(CompressHostList, RoundTripsThroughExpand) {
  Names hosts = {"gpu-a01", "gpu-a02", "gpu-a03", "node7", "node08", "node9", "node10", "login", "node10"};
  Result<Names> back = ExpandHostList(CompressHostList(hosts));
  ASSERT_TRUE(back.ok()) << back.error().Message();
  EXPECT_EQ(*back, hosts);
}

// Notes and errors name hosts sorted: "gpu[00005,00012,00007]" read as a
// riddle; the compressor itself keeps scontrol's order (above).
TEST(HostListForMessages, SortsNaturallyDropsRepeatsThenCompresses) {
  EXPECT_EQ(HostListForMessages({"node1", "node3", "node2"}), "node[1-3]");
  EXPECT_EQ(HostListForMessages({"gpu00012", "gpu00005", "gpu00007", "gpu00006", "gpu00005"}), "gpu[00005-00007,00012]");
  EXPECT_EQ(HostListForMessages({"n10", "n9", "login", "n2"}), "login,n[2,9-10]");
  EXPECT_EQ(HostListForMessages({}), "");
}

}  // namespace
}  // namespace topolaunch
