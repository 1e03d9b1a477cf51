#include "run/order_notes.h"

#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/hostlist.h"

namespace topolaunch::run {

std::vector<std::string> IdleHostNotes(const std::vector<std::string>& pool, std::optional<int> nnodes, int max_restarts,
                                       const Plan& order) {
  std::vector<std::string> notes;
  if (!nnodes) return notes;
  std::set<std::string> used;
  for (const PlanNode& node : order.nodes) used.insert(node.host);
  for (const SkippedHost& s : order.skipped) used.insert(s.host);
  std::vector<std::string> idle;
  for (const std::string& host : pool)
    if (!used.contains(host)) idle.push_back(host);
  if (!idle.empty())
    notes.push_back(fmt::format("--nnodes {}: {} host(s) of the pool stay idle{}: {}", *nnodes, idle.size(),
                                max_restarts > 0 ? fmt::format(", spares for --max-restarts {}", max_restarts) : "",
                                HostListForMessages(idle)));
  for (const SkippedHost& s : order.skipped) notes.push_back(fmt::format("skipped {}: {}", s.host, s.reason));
  return notes;
}

std::vector<std::string> HostsOutsideAllocation(const std::vector<std::string>& allocation,
                                                const std::vector<SessionNode>& nodes) {
  std::vector<std::string> outside;
  if (allocation.empty()) return outside;
  std::set<std::string> allocated(allocation.begin(), allocation.end());
  for (const SessionNode& node : nodes)
    if (!allocated.contains(node.host)) outside.push_back(node.host);
  return outside;
}

bool ReorderedByDomains(const Plan& plan, const std::vector<SessionNode>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (plan.nodes[i].host != nodes[i].host) return true;
  return false;
}

std::string DomainsOfPlan(const Plan& plan) {
  std::vector<std::pair<std::string, std::vector<std::string>>> domains;
  for (const PlanNode& n : plan.nodes) {
    if (n.nvlink_domain.empty()) continue;
    if (domains.empty() || domains.back().first != n.nvlink_domain) domains.push_back({n.nvlink_domain, {}});
    domains.back().second.push_back(n.host);
  }
  std::string out;
  for (const auto& [name, hosts] : domains) out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", name, HostListForMessages(hosts));
  return out;
}

}  // namespace topolaunch::run
