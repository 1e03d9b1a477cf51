#include "launch/binding_within_cgroup.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

// /proc/self/status of a task in a Slurm step holding CPUs 2-3 and 6 of a
// two-socket node (lines around it as the kernel writes them).
constexpr const char* kStatus =
    "Name:\tpython3\nCpus_allowed:\t4c\nCpus_allowed_list:\t2-3,6\nMems_allowed:\t00000001\n"
    "Mems_allowed_list:\t0\nvoluntary_ctxt_switches:\t3\n";

TEST(ParseAllowedPlaces, TheListsOfProcStatus) {
  AllowedPlaces allowed = ParseAllowedPlaces(kStatus);
  EXPECT_EQ(allowed.cpus, (std::vector<int>{2, 3, 6}));
  EXPECT_EQ(allowed.mems, (std::vector<int>{0}));
  // Unknown stays empty: nothing is narrowed by it.
  allowed = ParseAllowedPlaces("Name:\tx\nXCpus_allowed_list:\t1\nCpus_allowed_list:\tbogus\n");
  EXPECT_TRUE(allowed.cpus.empty());
  EXPECT_TRUE(allowed.mems.empty());
}

// Four local ranks planned on the whole node (two a socket); the step
// holds CPUs 2-3 and 6 and memory node 0.
TEST(WithinAllowed, EachBindingKeepsWhatTheCgroupAllowsAndTheNoteSaysWhat) {
  std::vector<BindingEntry> planned = {{{0, 1, 2, 3}, 0}, {{4, 5, 6, 7}, 0}, {{8, 9}, 1}, {{}, std::nullopt}};
  NarrowedBindings narrowed = WithinAllowed(planned, ParseAllowedPlaces(kStatus));
  ASSERT_EQ(narrowed.entries.size(), 4u);
  EXPECT_EQ(narrowed.entries[0], (BindingEntry{{2, 3}, 0}));
  EXPECT_EQ(narrowed.entries[1], (BindingEntry{{6}, 0}));
  EXPECT_EQ(narrowed.entries[2], (BindingEntry{{}, std::nullopt}));
  EXPECT_EQ(narrowed.entries[3], (BindingEntry{{}, std::nullopt}));
  EXPECT_EQ(narrowed.note,
            "this node's step may use CPUs 2-3,6 and memory node(s) 0 (its cgroup): local rank(s) 0-1 bound to the part "
            "of their CPUs it allows; local rank(s) 2 not bound to CPUs (it allows none of theirs); local rank(s) 2 not "
            "bound to memory (their NUMA node is outside it)");
}

TEST(WithinAllowed, BindingsInsideTheCgroupOrAnUnknownOneAreLeftAlone) {
  std::vector<BindingEntry> planned = {{{2, 3}, 0}, {{6}, std::nullopt}};
  NarrowedBindings narrowed = WithinAllowed(planned, ParseAllowedPlaces(kStatus));
  EXPECT_EQ(narrowed.entries, planned);
  EXPECT_EQ(narrowed.note, "");
  narrowed = WithinAllowed({{{0, 1, 2, 3}, 1}}, AllowedPlaces{});
  EXPECT_EQ(narrowed.entries, (std::vector<BindingEntry>{{{0, 1, 2, 3}, 1}}));
  EXPECT_EQ(narrowed.note, "");
}

}  // namespace
}  // namespace topolaunch
