// TOPOLAUNCH_BINDINGS: round trips, unbound parts, bad entries, and the
// command `bind` execs.
#include "launch/binding_spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace topolaunch {
namespace {

RankBinding Rank(int local_rank, std::vector<int> cpus, std::optional<int> numa) {
  RankBinding r;
  r.local_rank = local_rank, r.cpus = std::move(cpus), r.numa = numa;
  r.gpu = "0000:07:00.0", r.nic = "mlx5_0";  // not part of the spec
  return r;
}

struct RoundTripCase {
  std::string name;
  std::vector<RankBinding> ranks;
  std::string text;
  std::vector<BindingEntry> entries;
};

TEST(BindingSpec, RoundTrips) {
  const std::vector<RoundTripCase> cases = {
      {"none", {}, "", {}},
      {"four ranks on two nodes",
       {Rank(0, {0, 1, 2, 3}, 0), Rank(1, {4, 5, 6, 7}, 0), Rank(2, {8, 9, 10, 11}, 1), Rank(3, {12, 13, 14, 15}, 1)},
       "0-3/0;4-7/0;8-11/1;12-15/1",
       {{{0, 1, 2, 3}, 0}, {{4, 5, 6, 7}, 0}, {{8, 9, 10, 11}, 1}, {{12, 13, 14, 15}, 1}}},
      {"split cores", {Rank(0, {0, 1, 64, 65}, 0), Rank(1, {2, 66}, 3)}, "0-1,64-65/0;2,66/3",
       {{{0, 1, 64, 65}, 0}, {{2, 66}, 3}}},
      {"memory only", {Rank(0, {}, 0), Rank(1, {}, 1)}, "/0;/1", {{{}, 0}, {{}, 1}}},
      {"CPUs only", {Rank(0, {0, 1}, std::nullopt)}, "0-1/", {{{0, 1}, std::nullopt}}},
      {"one unbound rank", {Rank(0, {}, std::nullopt)}, "/", {{}}},
      {"mixed", {Rank(0, {5}, 2), Rank(1, {}, std::nullopt), Rank(2, {7}, std::nullopt)}, "5/2;/;7/",
       {{{5}, 2}, {}, {{7}, std::nullopt}}},
  };
  for (const RoundTripCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FormatBindingSpec(c.ranks), c.text);
    Result<std::vector<BindingEntry>> parsed = ParseBindingSpec(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
    EXPECT_EQ(*parsed, c.entries);
  }
}

TEST(BindingSpec, AcceptsEmptyEntriesAsUnbound) {
  Result<std::vector<BindingEntry>> parsed = ParseBindingSpec("0/0;;1/");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(*parsed, (std::vector<BindingEntry>{{{0}, 0}, {}, {{1}, std::nullopt}}));
  parsed = ParseBindingSpec("0/0;");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(parsed->size(), 2u);
}

struct BadCase {
  std::string text;
  std::vector<std::string> whats;  ///< one per problem, each a substring
};

TEST(BindingSpec, NamesEveryBadEntry) {
  const std::vector<BadCase> cases = {
      {"0-3", {"entry 0 (local rank 0) \"0-3\": needs exactly one '/'"}},
      {"0/1/2", {"entry 0 (local rank 0) \"0/1/2\": needs exactly one '/'"}},
      {"0/0;x/1", {"entry 1 (local rank 1) \"x/1\": invalid CPU list"}},
      {"3-1/0", {"entry 0 (local rank 0) \"3-1/0\": invalid CPU list \"3-1\": range \"3-1\" out of order"}},
      {"0/-1", {"NUMA node \"-1\""}},
      {"0/a", {"NUMA node \"a\""}},
      {"0/ 1", {"NUMA node \" 1\""}},
      {"0/99999999999", {"NUMA node \"99999999999\""}},
      {"0/0;bad;1/1;2/x", {"entry 1 (local rank 1) \"bad\"", "entry 3 (local rank 3) \"2/x\""}},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    Result<std::vector<BindingEntry>> parsed = ParseBindingSpec(c.text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().code, ErrorCode::kBadInput);
    const std::vector<Problem>& problems = parsed.error().problems;
    ASSERT_EQ(problems.size(), c.whats.size()) << parsed.error().Message();
    for (size_t i = 0; i < problems.size(); ++i) {
      EXPECT_EQ(problems[i].where, "TOPOLAUNCH_BINDINGS");
      EXPECT_NE(problems[i].what.find(c.whats[i]), std::string::npos) << problems[i].what;
    }
  }
}

struct CommandCase {
  std::string name;
  std::string spec;
  int local_rank;
  std::string numactl;
  std::vector<std::string> argv;
};

TEST(BindingSpec, BoundCommand) {
  const std::vector<std::string> program = {"python", "train.py", "--lr", "0.1", "", "a b"};
  auto with = [&](std::vector<std::string> prefix) {
    prefix.insert(prefix.end(), program.begin(), program.end());
    return prefix;
  };
  const std::vector<CommandCase> cases = {
      {"CPUs and memory", "0-15/0;16-31/1", 1, "/usr/bin/numactl",
       with({"/usr/bin/numactl", "--physcpubind=16-31", "--membind=1", "--"})},
      {"memory only", "/0;/1", 0, "/usr/bin/numactl", with({"/usr/bin/numactl", "--membind=0", "--"})},
      {"CPUs only", "0,2/;1,3/", 1, "numactl", with({"numactl", "--physcpubind=1,3", "--"})},
      {"unbound entry needs no numactl", "0/0;/", 1, "/usr/bin/numactl", program},
      {"no numactl: the program itself", "0-15/0", 0, "", program},
  };
  for (const CommandCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<BindingEntry>> entries = ParseBindingSpec(c.spec);
    ASSERT_TRUE(entries.ok()) << entries.error().Message();
    Result<Command> command = BoundCommand(*entries, c.local_rank, program, c.numactl);
    ASSERT_TRUE(command.ok()) << command.error().Message();
    EXPECT_EQ(command->argv, c.argv);
    EXPECT_TRUE(command->env.empty());
    EXPECT_TRUE(command->cwd.empty());
  }
}

TEST(BindingSpec, BindsSomething) {
  EXPECT_TRUE(BindsSomething({{0}, std::nullopt}));
  EXPECT_TRUE(BindsSomething({{}, 0}));
  EXPECT_FALSE(BindsSomething({}));
}

TEST(BindingSpec, LocalRankWithoutEntry) {
  std::vector<BindingEntry> two = {{{0}, 0}, {{1}, 0}};
  for (int rank : {2, 7, -1}) {
    SCOPED_TRACE(rank);
    Result<Command> command = BoundCommand(two, rank, {"python"}, "numactl");
    ASSERT_FALSE(command.ok());
    EXPECT_EQ(command.error().code, ErrorCode::kBadInput);
    EXPECT_EQ(command.error().problems[0].where, "TOPOLAUNCH_BINDINGS");
    EXPECT_NE(command.error().problems[0].what.find(fmt::format("local rank {} (LOCAL_RANK)", rank)), std::string::npos)
        << command.error().Message();
    EXPECT_NE(command.error().problems[0].what.find("0-1"), std::string::npos) << command.error().Message();
  }
  Result<Command> none = BoundCommand({}, 0, {"python"}, "numactl");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kBadInput);
}

TEST(BindingSpec, EmptyProgramIsBadUsage) {
  std::vector<BindingEntry> one = {{{0}, 0}};
  Result<Command> command = BoundCommand(one, 0, {}, "numactl");
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().code, ErrorCode::kBadUsage);
}

}  // namespace
}  // namespace topolaunch
