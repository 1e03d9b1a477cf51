#include "rankmap/plan_launcher_formats.h"

#include <fmt/format.h>

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

}  // namespace topolaunch
