// SrunExecutor with the real `topolaunch agent` on this machine: a stand-in
// for srun (FakeSrun) starts the step's command once per host, with the
// variables slurmd gives a task and the step's one stdin, so everything
// past srun is real: the connect-back line, the agents' TCP connections,
// their launch messages, frames, exit statuses and stops. The real srun is
// in tests/cli/run_srun_test.cc.
#include "launch/srun_executor.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "launch/launch_message.h"
#include "launch/local_executor.h"
#include "launch/srun_step_env.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

using std::chrono::milliseconds;

TEST(SrunStepCommand, OneTaskOnEachNamedNodeWithTheInnerCommandAfterTheOptions) {
  Command inner{{"/opt/topolaunch", "agent", "--x=1"}, {{"TL_A", "1"}}, "/shared/job"};
  Command step = SrunStepCommand("/usr/bin/srun", {"node7", "node3", "node8"}, inner);
  EXPECT_EQ(step.argv, (std::vector<std::string>{"/usr/bin/srun", "--nodes=3", "--ntasks=3", "--ntasks-per-node=1",
                                                  "--nodelist=node[3,7-8]", "--overlap", "--kill-on-bad-exit=1",
                                                  "--unbuffered", "--label", "--quiet", "--mpi=none", "--cpu-bind=none",
                                                  "--export=ALL", "--chdir=/shared/job", "--", "/opt/topolaunch", "agent",
                                                  "--x=1"}));
  EXPECT_EQ(step.env, inner.env);  // srun exports its own environment to the tasks
  EXPECT_TRUE(step.cwd.empty());
  for (const char* name : {"SLURM_GPUS_PER_TASK", "SLURM_CPUS_PER_TASK", "SRUN_CPUS_PER_TASK", "SLURM_TRES_PER_TASK",
                           "SLURM_DISTRIBUTION", "SLURM_MPI_TYPE", "SLURM_EXPORT_ENV"})
    EXPECT_NE(std::find(step.unset.begin(), step.unset.end(), name), step.unset.end()) << name << " reaches srun";
  EXPECT_EQ(std::find(step.unset.begin(), step.unset.end(), "SLURM_JOB_ID"), step.unset.end()) << "srun needs the job";
}

// GPUs asked for per task: Slurm gives a step that asks for none the job's
// per-task count, one task's GPUs for the one agent a node; the step asks
// for what the job holds on a node.
TEST(StepGpuRequest, PerTaskGpusTimesTasksANode) {
  std::optional<StepGpus> gpus = StepGpuRequest({"SLURM_GPUS_PER_TASK=1", "SLURM_TASKS_PER_NODE=2(x3)"});
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->option, "--gres=gpu:2");
  gpus = StepGpuRequest({"SLURM_TRES_PER_TASK=cpu=10,gres/gpu:a100=2", "SLURM_TASKS_PER_NODE=4"});
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->option, "--gres=gpu:a100:8");
  gpus = StepGpuRequest({"SLURM_GPUS_PER_TASK=h100:1", "SLURM_TASKS_PER_NODE=4(x2),2"});
  ASSERT_TRUE(gpus);
  EXPECT_EQ(gpus->option, "--gres=gpu:h100:2");
  EXPECT_EQ(gpus->most, 4);
  EXPECT_NE(StepNote({}, gpus).find("the nodes hold 2 to 4 of the job's GPUs"), std::string::npos) << StepNote({}, gpus);
  EXPECT_NE(StepNote({}, gpus).find("--export=ALL --gres=gpu:h100:2 --overlap"), std::string::npos) << StepNote({}, gpus);
  // Asked for per node or per job, or not read: Slurm copies the job's request as it is.
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_NODE=8", "SLURM_TASKS_PER_NODE=8(x2)"}));
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_TASK=1"}));
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_TASK=x", "SLURM_TASKS_PER_NODE=2"}));
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_TASK=1", "SLURM_TASKS_PER_NODE=2(x"}));
  EXPECT_FALSE(StepGpuRequest({"SLURM_TRES_PER_TASK=cpu=4", "SLURM_TASKS_PER_NODE=2"}));
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_TASK=1", "SLURM_TASKS_PER_NODE=2(x2000000000)"})) << "no such job";
  EXPECT_FALSE(StepGpuRequest({"SLURM_GPUS_PER_TASK=2000000", "SLURM_TASKS_PER_NODE=2000"})) << "no such node";
}

// The job's per-task requests are named in the step's note; the rest of its
// environment is not.
TEST(SrunStepCommand, TheNoteNamesWhatTheStepDoesNotInherit) {
  std::vector<std::string> dropped = DroppedForTheStep(
      {"SLURM_JOB_ID=4711", "SLURM_GPUS_PER_TASK=1", "PATH=/usr/bin", "SLURM_CPUS_PER_TASK=12", "SLURM_CPUS_PER_TASKS=x"});
  EXPECT_EQ(dropped, (std::vector<std::string>{"SLURM_GPUS_PER_TASK=1", "SLURM_CPUS_PER_TASK=12"}));
  std::string note = StepNote(dropped);
  EXPECT_NE(note.find("--mpi=none --cpu-bind=none --export=ALL --overlap"), std::string::npos) << note;
  EXPECT_NE(note.find("not passed on to it, the job's own per-task requests: SLURM_GPUS_PER_TASK=1, SLURM_CPUS_PER_TASK=12"),
            std::string::npos)
      << note;
  EXPECT_EQ(StepNote({}).find("not passed on"), std::string::npos);
}

TEST(SrunStepCommand, NoChdirWhenTheInnerCommandHasNoFolder) {
  Command step = SrunStepCommand("srun", {"n1"}, Command{{"true"}});
  EXPECT_EQ(std::count(step.argv.begin(), step.argv.end(), "--"), 1);
  for (const std::string& arg : step.argv) EXPECT_FALSE(arg.starts_with("--chdir")) << arg;
  EXPECT_EQ(step.argv.back(), "true");
}

// What srun does for a step, on this machine: each host of --nodelist gets
// the command after "--" with SLURMD_NODENAME and SLURM_PROCID (tasks in
// the nodelist's sorted order, as Slurm numbers them), all with the same
// stdin. `skip` hosts get no task; `fail` ends it at once as srun does when
// Slurm refuses the step; `early` lines go to the sink as srun's own.
class FakeSrun : public Executor {
 public:
  std::vector<std::string> skip;
  bool fail = false;
  std::vector<std::pair<OutputStream, std::string>> early;
  std::vector<std::string> argv;  ///< what srun was asked to run

  class Step : public RunningCommand {
   public:
    std::vector<std::unique_ptr<RunningCommand>> tasks;
    std::atomic<bool> killed = false;  ///< srun gone (SIGKILL), its tasks still running
    std::optional<ExitInfo> Wait(milliseconds timeout) override {
      if (killed) return ExitInfo{-1, "KILL", false};
      auto until = std::chrono::steady_clock::now() + timeout;
      for (auto& task : tasks) {
        auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
        if (!task->Wait(std::max(left, milliseconds(0)))) return std::nullopt;
      }
      return ExitInfo{0, "", false};
    }
    ExitInfo Stop(milliseconds grace) override {
      for (auto& task : tasks) task->Stop(grace);
      return ExitInfo{-1, "TERM", false};
    }
    Status WriteStdin(std::string_view) override { return Ok{}; }
    void CloseStdin() override {}
  };
  Step* step = nullptr;

  std::vector<StartResult> StartAll(std::span<const LaunchRequest> requests, OutputSink sink) override {
    argv = requests[0].command.argv;
    std::vector<StartResult> result;
    if (fail) {
      sink(0, OutputStream::kStderr, "srun: error: Unable to create step for job 7: Requested node configuration is not available");
      result.emplace_back(std::unique_ptr<RunningCommand>(std::make_unique<Step>()));
      step = static_cast<Step*>(result[0]->get());
      step->killed = true;  // ended
      return result;
    }
    auto dashes = std::find(argv.begin(), argv.end(), "--");
    std::string nodelist;
    for (const std::string& arg : argv)
      if (arg.starts_with("--nodelist=")) nodelist = arg.substr(11);
    std::vector<std::string> hosts = ExpandHostList(nodelist).value();
    std::sort(hosts.begin(), hosts.end());
    std::vector<LaunchRequest> tasks;
    for (size_t t = 0; t < hosts.size(); ++t) {
      if (std::find(skip.begin(), skip.end(), hosts[t]) != skip.end()) continue;
      Command task{std::vector<std::string>(dashes + 1, argv.end()), requests[0].command.env, ""};
      task.env.emplace_back("SLURMD_NODENAME", hosts[t]);
      task.env.emplace_back("SLURM_PROCID", std::to_string(t));
      tasks.push_back({hosts[t], task, requests[0].stdin_data, true});
    }
    for (const auto& [stream, line] : early) sink(0, stream, line);
    auto running = std::make_unique<Step>();
    for (StartResult& task : local_.StartAll(tasks, sink)) running->tasks.push_back(std::move(task).value());
    step = running.get();
    result.emplace_back(std::unique_ptr<RunningCommand>(std::move(running)));
    return result;
  }

 private:
  LocalExecutor local_;
};

struct Line {
  size_t node;
  OutputStream stream;
  std::string text;
  bool operator==(const Line&) const = default;
};

class SrunExecutorTest : public ::testing::Test {
 protected:
  std::vector<StartResult> Start(const std::vector<std::string>& hosts, const std::vector<LaunchMessage>& messages,
                                 milliseconds connect_timeout = milliseconds(30000)) {
    auto fake = std::make_unique<FakeSrun>();
    fake->skip = skip_;
    fake->fail = fail_;
    fake->early = early_;
    srun_ = fake.get();
    executor_ = std::make_unique<SrunExecutor>("/usr/bin/srun", std::move(fake), connect_timeout);
    std::vector<LaunchRequest> requests;
    for (size_t i = 0; i < hosts.size(); ++i)
      requests.push_back({hosts[i], Command{{testing::TopolaunchBinary(), "agent"}}, FormatLaunchMessage(messages[i]), false});
    return executor_->StartAll(requests, [this](size_t node, OutputStream stream, std::string_view text) {
      std::lock_guard lock(mutex_);
      lines_.push_back({node, stream, std::string(text)});
    });
  }
  std::vector<Line> Lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  bool Has(const Line& line) {
    std::vector<Line> all = Lines();
    return std::find(all.begin(), all.end(), line) != all.end();
  }
  static LaunchMessage Shell(const std::string& script) {
    LaunchMessage message;
    message.command = Command{{"sh", "-c", script}};
    message.grace = milliseconds(1000);
    return message;
  }

  std::vector<std::string> skip_;
  bool fail_ = false;
  std::vector<std::pair<OutputStream, std::string>> early_;
  FakeSrun* srun_ = nullptr;
  std::unique_ptr<SrunExecutor> executor_;
  std::mutex mutex_;
  std::vector<Line> lines_;
};

TEST_F(SrunExecutorTest, OneStepForAllHostsEachAgentRunningOnlyItsOwnMessage) {
  // Plan order differs from Slurm's task order: node i is still hosts[i].
  std::vector<std::string> hosts = {"h3", "h1", "h2"};
  std::vector<LaunchMessage> messages;
  for (size_t i = 0; i < hosts.size(); ++i) {
    LaunchMessage m = Shell("echo \"$WHO got its message\"; echo to-stderr >&2; exit $CODE");
    m.command.env = {{"WHO", hosts[i]}, {"CODE", std::to_string(10 + i)}};
    messages.push_back(m);
  }
  std::vector<StartResult> started = Start(hosts, messages);
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(std::count(srun_->argv.begin(), srun_->argv.end(), "--nodelist=h[1-3]"), 1);
  EXPECT_EQ(std::count(srun_->argv.begin(), srun_->argv.end(), "--ntasks=3"), 1);
  for (size_t i = 0; i < hosts.size(); ++i) {
    ASSERT_TRUE(started[i].ok()) << started[i].error().Message();
    std::optional<ExitInfo> exit = (*started[i])->Wait(milliseconds(20000));
    ASSERT_TRUE(exit) << hosts[i];
    EXPECT_EQ(*exit, (ExitInfo{static_cast<int>(10 + i), "", false})) << hosts[i];
    EXPECT_TRUE(Has({i, OutputStream::kStdout, hosts[i] + " got its message"})) << hosts[i];
    EXPECT_TRUE(Has({i, OutputStream::kStderr, "to-stderr"})) << hosts[i];
  }
  EXPECT_EQ(Lines().size(), 6u);
}

TEST_F(SrunExecutorTest, StopEndsTheAgentWhichStopsItsWorkers) {
  std::vector<StartResult> started = Start({"h1", "h2"}, {Shell("echo up; exec sleep 600"), Shell("echo up; exec sleep 600")});
  ASSERT_TRUE(started[0].ok() && started[1].ok());
  for (int i = 0; i < 200 && !(Has({0, OutputStream::kStdout, "up"}) && Has({1, OutputStream::kStdout, "up"})); ++i)
    std::this_thread::sleep_for(milliseconds(50));
  auto begun = std::chrono::steady_clock::now();
  ExitInfo stopped = (*started[0])->Stop(milliseconds(5000));
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(4));
  EXPECT_EQ(stopped, (ExitInfo{128 + SIGTERM, "", false}));  // the agent's report: its worker ended by SIGTERM
  EXPECT_FALSE((*started[1])->Wait(milliseconds(200))) << "stopping one node stopped another";
  EXPECT_EQ((*started[1])->Stop(milliseconds(5000)).exit_code, 128 + SIGTERM);
  EXPECT_TRUE(srun_->step->Wait(milliseconds(10000))) << "an agent outlived its stop";
}

TEST_F(SrunExecutorTest, AnAgentThatNeverConnectsIsNamedAndTheOthersStart) {
  skip_ = {"h2"};
  std::vector<StartResult> started = Start({"h1", "h2"}, {Shell("exit 0"), Shell("exit 0")}, milliseconds(1500));
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  ASSERT_FALSE(started[1].ok());
  EXPECT_EQ(started[1].error().code, ErrorCode::kTimeout);
  EXPECT_EQ(started[1].error().problems[0].where, "h2");
  EXPECT_NE(started[1].error().Message().find("the agent on h2 did not connect back"), std::string::npos)
      << started[1].error().Message();
  EXPECT_EQ((*started[0])->Wait(milliseconds(20000)), (ExitInfo{0, "", false}));
}

TEST_F(SrunExecutorTest, AStepSlurmRefusesFailsEveryHostWithSrunsWords) {
  fail_ = true;
  std::vector<StartResult> started = Start({"h1", "h2"}, {Shell("exit 0"), Shell("exit 0")});
  for (StartResult& result : started) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(result.error().Message().find("Requested node configuration is not available"), std::string::npos)
        << result.error().Message();
  }
  EXPECT_TRUE(Lines().empty()) << "srun's refusal went to a node's output";
}

TEST_F(SrunExecutorTest, SrunsOwnLinesGoToTheNodeTheyAreAbout) {
  early_ = {{OutputStream::kStderr, "  1: written by task 1 before it connected"},
            {OutputStream::kStderr, "srun: error: h3: task 2: Exited with exit code 1"}};
  std::vector<StartResult> started = Start({"h3", "h2", "h1"}, {Shell("exit 0"), Shell("exit 0"), Shell("exit 0")});
  for (StartResult& result : started) ASSERT_TRUE(result.ok()) << result.error().Message();
  EXPECT_TRUE(Has({1, OutputStream::kStderr, "written by task 1 before it connected"}));  // task 1 is h2, node 1
  EXPECT_TRUE(Has({0, OutputStream::kStderr, "srun: error: h3: task 2: Exited with exit code 1"}));
}

TEST_F(SrunExecutorTest, AnAgentsErrorComesBackOnItsConnection) {
  std::vector<StartResult> started = Start({"h1"}, {LaunchMessage{}});  // no argv
  ASSERT_TRUE(started[0].ok()) << started[0].error().Message();
  EXPECT_EQ((*started[0])->Wait(milliseconds(20000)), (ExitInfo{2, "", false}));
  EXPECT_EQ(Lines(), (std::vector<Line>{{0, OutputStream::kStderr,
                                         "topolaunch agent: error: launch message: $.argv: empty: nothing to run"}}));
}

TEST_F(SrunExecutorTest, WhenSrunIsKilledTheNodesCountAsLostAndTheirAgentsStop) {
  std::vector<StartResult> started = Start({"h1"}, {Shell("echo up; exec sleep 600")});
  ASSERT_TRUE(started[0].ok());
  for (int i = 0; i < 200 && !Has({0, OutputStream::kStdout, "up"}); ++i) std::this_thread::sleep_for(milliseconds(50));
  srun_->step->killed = true;
  std::optional<ExitInfo> exit = (*started[0])->Wait(SrunExecutor::kLostAfterStep + milliseconds(3000));
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->connection_lost);
  ASSERT_FALSE(srun_->step->tasks.empty());
  EXPECT_TRUE(srun_->step->tasks[0]->Wait(milliseconds(10000))) << "the agent kept running without `run`";
}

}  // namespace
}  // namespace topolaunch
