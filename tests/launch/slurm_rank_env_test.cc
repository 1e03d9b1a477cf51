// Slurm's task variables for a worker from torchrun's ranks (slurm_rank_env.h).
#include "launch/slurm_rank_env.h"

#include <map>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

using Env = std::map<std::string, std::string>;

EnvChange For(const Env& env) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) names.push_back(name);
  return SlurmVariablesForRank(
      [&env](const std::string& name) -> std::optional<std::string> {
        auto found = env.find(name);
        return found == env.end() ? std::nullopt : std::optional<std::string>(found->second);
      },
      names);
}

// Rank 5 of 8, two nodes of four, on the second node; the agent's task was
// task 0 of a two-task step.
const Env kWorker = {{"SLURM_PROCID", "0"},      {"SLURM_NTASKS", "2"},     {"SLURM_LOCALID", "0"},   {"SLURM_NODEID", "0"},
                     {"SLURM_GTIDS", "0"},       {"SLURM_TASK_PID", "77"},  {"SLURM_CPU_BIND", "none"}, {"PMI_RANK", "0"},
                     {"PMIX_RANK", "0"},         {"SLURM_JOB_ID", "4711"},  {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"},
                     {"RANK", "5"},              {"LOCAL_RANK", "1"},       {"WORLD_SIZE", "8"},      {"LOCAL_WORLD_SIZE", "4"},
                     {"GROUP_RANK", "1"}};

TEST(SlurmVariablesForRank, TorchrunsRanksReplaceTheAgentTasks) {
  EnvChange change = For(kWorker);
  EXPECT_EQ(change.set, (std::vector<std::pair<std::string, std::string>>{{"SLURM_PROCID", "5"},
                                                                          {"SLURM_LOCALID", "1"},
                                                                          {"SLURM_NODEID", "1"},
                                                                          {"SLURM_NTASKS", "8"},
                                                                          {"SLURM_NPROCS", "8"},
                                                                          {"SLURM_NTASKS_PER_NODE", "4"},
                                                                          {"SLURM_STEP_NUM_TASKS", "8"}}));
  EXPECT_EQ(change.unset, (std::vector<std::string>{"PMIX_RANK", "PMI_RANK", "SLURM_CPU_BIND", "SLURM_GTIDS",
                                                    "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASK_PID"}));
}

TEST(SlurmVariablesForRank, NothingOutsideASlurmTaskOrWithoutTorchrun) {
  Env outside = kWorker;
  outside.erase("SLURM_PROCID");
  EXPECT_EQ(For(outside), EnvChange{});
  Env no_torchrun = kWorker;
  no_torchrun.erase("GROUP_RANK");
  EXPECT_EQ(For(no_torchrun), EnvChange{});
  Env garbled = kWorker;
  garbled["RANK"] = "5x";
  EXPECT_EQ(For(garbled), EnvChange{});
}

}  // namespace
}  // namespace topolaunch
