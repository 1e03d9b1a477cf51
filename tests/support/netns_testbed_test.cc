// The testbed itself: it comes up, and its destructor leaves nothing behind
// (namespaces, sshds and their children, the root namespace's route).
#include "support/netns_testbed.h"

#include <gtest/gtest.h>

#include <optional>

namespace topolaunch::testing {
namespace {

std::string NetnsList() { return RunProcess(ProcessSpec{{"ip", "netns", "list"}, {}, "", std::chrono::seconds(10)}).out; }

TEST(NetnsTestbed, TearsDownEverythingItStarted) {
  if (auto why = NetnsTestbed::Unavailable()) GTEST_SKIP() << *why;
  std::vector<pid_t> pids;
  std::string head;
  {
    auto testbed = NetnsTestbed::Start(2);
    ASSERT_TRUE(testbed.ok()) << testbed.error().Message();
    head = (*testbed)->HeadNamespace();
    EXPECT_NE(NetnsList().find(head), std::string::npos);
    pids = (*testbed)->PidsInNode(1);
    EXPECT_FALSE(pids.empty()) << "no sshd in node1";
    ProcessResult route = RunProcess(ProcessSpec{{"ip", "route", "show", "10.200.0.0/24"}, {}, "", std::chrono::seconds(10)});
    EXPECT_NE(route.out.find("unreachable"), std::string::npos) << "no safety route in the root namespace";
  }
  std::string left = NetnsList();
  EXPECT_EQ(left.find(head.substr(0, head.size() - 5)), std::string::npos) << left;
  for (pid_t pid : pids) EXPECT_TRUE(ReadFile("/proc/" + std::to_string(pid) + "/cmdline").empty()) << pid;
  std::optional<std::string> orphaned = NetnsTestbed::OrphanedRoute();
  EXPECT_FALSE(orphaned.has_value()) << "the route outlived the last testbed: " << orphaned.value_or("");
}

// Debian's bash runs ~/.bashrc even for the `bash -c` that sshd starts each
// command with: a developer's (pyenv init, one session at a time behind its
// lock) made 30 sessions to one node take over 30 s. On a node it reads as
// empty, so sessions do not depend on the machine's dotfiles.
TEST(NetnsTestbed, ANodeSeesRootsBashrcEmpty) {
  if (auto why = NetnsTestbed::Unavailable()) GTEST_SKIP() << *why;
  auto testbed = NetnsTestbed::Start(1);
  ASSERT_TRUE(testbed.ok()) << testbed.error().Message();
  ProcessSpec spec = (*testbed)->OnNode(1, {"sh", "-c", "cat ~root/.bashrc 2>/dev/null; echo end"});
  spec.timeout = std::chrono::seconds(10);
  ProcessResult r = RunProcess(spec);
  EXPECT_EQ(r.out, "end\n") << r.Describe();
}

}  // namespace
}  // namespace topolaunch::testing
