// SrunExecutor over the recording FakeExecutor: what srun is asked to run,
// and how a step is stopped (its stdin closed first, srun stopped only when
// the agent does not end within the grace).
#include "launch/srun_executor.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "support/fake_executor.h"

namespace topolaunch {
namespace {

using std::chrono::milliseconds;
using testing::FakeExecutor;

TEST(SrunStepCommand, OneTaskOnTheNamedNodeWithTheInnerCommandAfterTheOptions) {
  Command inner{{"/opt/topolaunch", "agent", "--x=1"}, {{"TL_A", "1"}}, "/shared/job"};
  Command step = SrunStepCommand("/usr/bin/srun", "node7", inner);
  EXPECT_EQ(step.argv, (std::vector<std::string>{"/usr/bin/srun", "--nodes=1", "--ntasks=1", "--ntasks-per-node=1",
                                                  "--nodelist=node7", "--overlap", "--kill-on-bad-exit=1", "--unbuffered",
                                                  "--quiet", "--chdir=/shared/job", "--", "/opt/topolaunch", "agent",
                                                  "--x=1"}));
  EXPECT_EQ(step.env, inner.env);  // srun exports its own environment to the task
  EXPECT_TRUE(step.cwd.empty());
}

TEST(SrunStepCommand, NoChdirWhenTheInnerCommandHasNoFolder) {
  Command step = SrunStepCommand("srun", "n1", Command{{"true"}});
  EXPECT_EQ(std::count(step.argv.begin(), step.argv.end(), "--"), 1);
  for (const std::string& arg : step.argv) EXPECT_FALSE(arg.starts_with("--chdir")) << arg;
  EXPECT_EQ(step.argv.back(), "true");
}

std::vector<LaunchRequest> Requests(const std::vector<std::string>& hosts) {
  std::vector<LaunchRequest> requests;
  for (const std::string& host : hosts) requests.push_back({host, Command{{"/opt/topolaunch", "agent"}}, "hello\n", false});
  return requests;
}

TEST(SrunExecutor, EachRequestBecomesAStepOnItsOwnHostWithItsOwnStdin) {
  auto fake = std::make_unique<FakeExecutor>();
  FakeExecutor* recorder = fake.get();
  SrunExecutor executor("/usr/bin/srun", std::move(fake));
  std::vector<LaunchRequest> requests = Requests({"node2", "node1"});
  requests[1].stdin_data = "other\n";
  std::vector<StartResult> started = executor.StartAll(requests, [](size_t, OutputStream, std::string_view) {});
  ASSERT_EQ(started.size(), 2u);
  std::vector<LaunchRequest> seen = recorder->requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].command, SrunStepCommand("/usr/bin/srun", "node2", requests[0].command));
  EXPECT_EQ(seen[1].command, SrunStepCommand("/usr/bin/srun", "node1", requests[1].command));
  EXPECT_EQ(recorder->stdin_written("node2"), "hello\n");
  EXPECT_EQ(recorder->stdin_written("node1"), "other\n");
  EXPECT_FALSE(recorder->stdin_closed("node1"));
}

TEST(SrunExecutor, StopClosesStdinAndLeavesSrunAloneWhenTheAgentEnds) {
  auto fake = std::make_unique<FakeExecutor>();
  FakeExecutor* recorder = fake.get();
  FakeExecutor::Script agent;
  agent.runs_until_stopped = true;  // ends on EOF, as `topolaunch agent` does
  recorder->SetScript("node1", agent);
  SrunExecutor executor("srun", std::move(fake));
  std::vector<StartResult> started = executor.StartAll(Requests({"node1"}), [](size_t, OutputStream, std::string_view) {});
  ASSERT_TRUE(started[0].ok());
  ExitInfo exit = (*started[0])->Stop(milliseconds(2000));
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_TRUE(recorder->stdin_closed("node1"));
  EXPECT_TRUE(recorder->stopped().empty());  // srun was not signalled: the step ended by itself
}

TEST(SrunExecutor, StopSignalsSrunWhenTheAgentOutlivesTheGrace) {
  auto fake = std::make_unique<FakeExecutor>();
  FakeExecutor* recorder = fake.get();
  FakeExecutor::Script deaf;
  deaf.run_time = milliseconds(60'000);  // ignores EOF
  recorder->SetScript("node1", deaf);
  SrunExecutor executor("srun", std::move(fake));
  std::vector<StartResult> started = executor.StartAll(Requests({"node1"}), [](size_t, OutputStream, std::string_view) {});
  ASSERT_TRUE(started[0].ok());
  ExitInfo exit = (*started[0])->Stop(milliseconds(50));
  EXPECT_EQ(exit.signal, "TERM");
  EXPECT_TRUE(recorder->stdin_closed("node1"));
  EXPECT_EQ(recorder->stopped(), std::vector<std::string>{"node1"});
}

TEST(SrunExecutor, AStartFailureStaysTheBaseExecutorsError) {
  auto fake = std::make_unique<FakeExecutor>();
  FakeExecutor::Script broken;
  broken.start_error = Error(ErrorCode::kUnavailable, "srun", "No such file or directory");
  fake->SetScript("node1", broken);
  SrunExecutor executor("srun", std::move(fake));
  std::vector<StartResult> started = executor.StartAll(Requests({"node1"}), [](size_t, OutputStream, std::string_view) {});
  ASSERT_FALSE(started[0].ok());
  EXPECT_NE(started[0].error().Message().find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace topolaunch
