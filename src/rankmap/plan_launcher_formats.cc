#include "rankmap/plan_launcher_formats.h"

#include <fmt/format.h>

#include "core/hostlist.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

// The ranks a node runs: its bindings, or the plan's count when unbound.
int RanksOn(const Plan& plan, const PlanNode& node) {
  return node.local.empty() ? plan.nproc_per_node : static_cast<int>(node.local.size());
}

}  // namespace

std::string FormatPlanHostfile(const Plan& plan) {
  std::string out;
  for (const PlanNode& node : plan.nodes) out += fmt::format("{} slots={}\n", node.host, RanksOn(plan, node));
  return out;
}

std::string FormatPlanSlurmHostfile(const Plan& plan) {
  std::string out;
  for (const PlanNode& node : plan.nodes)
    for (int i = 0; i < RanksOn(plan, node); ++i) out += node.host + "\n";
  return out;
}

Result<std::string> FormatPlanRankfile(const Plan& plan) {
  std::string out;
  std::vector<std::string> unbound;
  for (const PlanNode& node : plan.nodes) {
    bool bound = RanksOn(plan, node) == static_cast<int>(node.local.size());
    for (const RankBinding& rank : node.local) bound = bound && !rank.cpus.empty();
    if (!bound) {
      unbound.push_back(node.host);
      continue;
    }
    for (const RankBinding& rank : node.local)
      out += fmt::format("rank {}={} slot={}\n", node.first_rank + rank.local_rank, node.host, FormatCpuList(rank.cpus));
  }
  if (!unbound.empty())
    return Error(ErrorCode::kBadInput, "--format rankfile",
                 fmt::format("a rankfile binds every rank, but the CPUs of {} are unknown (no layout in the topology: "
                             "`topolaunch discover` on those hosts, or --format hostfile)",
                             HostListForMessages(unbound)));
  return out;
}

}  // namespace topolaunch
