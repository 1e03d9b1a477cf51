#include "launch/slurm_rank_env.h"

#include "core/text_io.h"

namespace topolaunch {

namespace {

std::optional<long long> Count(const std::optional<std::string>& text) {
  return text ? DecimalNumber(*text, 0, 1LL << 40) : std::nullopt;
}

bool AgentTaskOnly(const std::string& name) {
  return name == "SLURM_GTIDS" || name == "SLURM_TASK_PID" || name == "SLURM_STEP_TASKS_PER_NODE" ||
         name.starts_with("SLURM_CPU_BIND") || name.starts_with("PMI_") || name.starts_with("PMIX_");
}

}  // namespace

EnvChange SlurmVariablesForRank(const std::function<std::optional<std::string>(const std::string&)>& get,
                                const std::vector<std::string>& names) {
  if (!get("SLURM_PROCID")) return {};
  std::optional<long long> rank = Count(get("RANK")), local_rank = Count(get("LOCAL_RANK")), world = Count(get("WORLD_SIZE")),
                      local_world = Count(get("LOCAL_WORLD_SIZE")), node = Count(get("GROUP_RANK"));
  if (!rank || !local_rank || !world || !local_world || !node) return {};
  EnvChange change;
  change.set = {{"SLURM_PROCID", std::to_string(*rank)},        {"SLURM_LOCALID", std::to_string(*local_rank)},
                {"SLURM_NODEID", std::to_string(*node)},        {"SLURM_NTASKS", std::to_string(*world)},
                {"SLURM_NPROCS", std::to_string(*world)},       {"SLURM_NTASKS_PER_NODE", std::to_string(*local_world)},
                {"SLURM_STEP_NUM_TASKS", std::to_string(*world)}};
  for (const std::string& name : names)
    if (AgentTaskOnly(name)) change.unset.push_back(name);
  return change;
}

}  // namespace topolaunch
