#include "rankmap/plan_table.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/hostlist.h"

namespace topolaunch {

namespace {

class Names {
 public:
  explicit Names(const Topology* topology) {
    if (topology) for (const TopologySwitch& s : topology->switches) names_[s.guid] = s.name;
  }
  std::string Switch(Guid guid) const {
    auto it = names_.find(guid);
    return it == names_.end() || it->second.empty() ? FormatGuid(guid) : it->second;
  }
  std::string Leaf(const PlanNode& node) const {
    if (!node.leaf) return "-";
    std::string name = Switch(*node.leaf);
    return node.leaves.size() > 1 ? fmt::format("{}(+{})", name, node.leaves.size() - 1) : name;
  }

 private:
  std::unordered_map<Guid, std::string> names_;
};

std::string Ranks(const PlanNode& n, int nproc) {
  return nproc == 1 ? fmt::format("{}", n.first_rank) : fmt::format("{}-{}", n.first_rank, n.first_rank + nproc - 1);
}

std::string Or(const std::string& s, const char* dash = "-") { return s.empty() ? dash : s; }

void AppendMetrics(const Plan& plan, std::string& out) {
  std::vector<LevelCrossings> levels = plan.metrics.levels;
  if (plan.metrics.nvlink_domain) levels.insert(levels.begin(), *plan.metrics.nvlink_domain);
  for (const LevelCrossings& l : levels)
    out += fmt::format("ring {} crossings: {} (lower bound {}; hostname order {}, given order {})\n", l.name,
                       l.crossings, l.lower_bound, l.hostname_order_crossings, l.given_order_crossings);
  // NCCL's trees link nodes 1, 2, 4, ... apart: their upper edges cross
  // whatever the order, so the bound is rarely reached (nccl_trees.h).
  for (const LevelCrossings& l : levels)
    out += fmt::format("tree {} crossings: {} (lower bound {}; hostname order {}, given order {})\n", l.name,
                       l.tree_crossings, l.tree_lower_bound, l.hostname_order_tree_crossings,
                       l.given_order_tree_crossings);
}

void AppendTable(const Plan& plan, const Names& names, std::string& out) {
  size_t host_w = 4, leaf_w = 4, domain_w = 0;
  for (const PlanNode& n : plan.nodes) {
    host_w = std::max(host_w, n.host.size());
    leaf_w = std::max(leaf_w, names.Leaf(n).size());
    if (!n.nvlink_domain.empty()) domain_w = std::max<size_t>({domain_w, 6, n.nvlink_domain.size()});
  }
  // The NVLink domain column only where there are domains.
  auto domain = [&](std::string_view text) { return domain_w ? fmt::format("{:<{}}  ", text, domain_w) : std::string(); };
  out += fmt::format("\n{:>5}  {:<{}}  {}{:<{}}  {:>5}  {}\n", "node", "host", host_w, domain("domain"), "leaf", leaf_w,
                     "spine", "ranks");
  for (const PlanNode& n : plan.nodes) {
    out += fmt::format("{:>5}  {:<{}}  {}{:<{}}  {:>5}  {}\n", n.node_rank, n.host, host_w,
                       domain(n.nvlink_domain.empty() ? "-" : n.nvlink_domain), names.Leaf(n), leaf_w,
                       n.groups.empty() ? "-" : fmt::format("{}", n.groups.front()), Ranks(n, plan.nproc_per_node));
    for (const RankBinding& r : n.local) {
      if (r.gpu.empty() && !r.numa && r.cpus.empty() && r.nic.empty()) continue;
      out += fmt::format("         local {:<3} gpu {:<12}  numa {:<2}  cpus {:<16}  nic {}\n", r.local_rank,
                         Or(r.gpu), r.numa ? fmt::format("{}", *r.numa) : "-", Or(FormatCpuList(r.cpus)), Or(r.nic));
    }
  }
}

// Groups from the top level down, then leaves, each host with its ranks. The
// plan's order keeps every group contiguous, so a change of id opens a group.
void AppendTree(const Plan& plan, const Names& names, std::string& out) {
  out += "\nfabric (where ranks land):\n";
  std::vector<int> open;
  std::string current_leaf;
  bool have_leaf = false;
  int on_line = 0;
  for (const PlanNode& n : plan.nodes) {
    if (!n.leaf) continue;
    size_t levels = n.groups.size();
    bool changed = open.size() != levels;
    for (size_t l = levels; l-- > 0;) {
      changed = changed || open[l] != n.groups[l];
      if (!changed) continue;
      int level = static_cast<int>(l) + 2;
      out += fmt::format("{}{} {}\n", std::string(2 * (levels - 1 - l) + 2, ' '),
                         level == 2 ? "spine group" : fmt::format("level-{} group", level), n.groups[l]);
      have_leaf = false;
    }
    open = n.groups;
    std::string leaf = names.Leaf(n);
    if (!have_leaf || leaf != current_leaf) {
      out += fmt::format("{}{}:", std::string(2 * levels + 2, ' '), leaf);
      current_leaf = leaf, have_leaf = true, on_line = 0;
    }
    if (++on_line > 6) {  // wrap long leaves, continuing under the leaf name
      out += "\n" + std::string(2 * levels + 2 + leaf.size() + 1, ' ');
      on_line = 1;
    }
    // An NVLink domain is named where it starts on the line (or the host
    // before was in another): its hosts follow, contiguous by the plan.
    if (!n.nvlink_domain.empty() && (on_line == 1 || (&n - 1)->nvlink_domain != n.nvlink_domain))
      out += fmt::format(" <{}>", n.nvlink_domain);
    out += fmt::format(" {}[{}]", n.host, Ranks(n, plan.nproc_per_node));
    bool last_of_leaf = &n == &plan.nodes.back() || names.Leaf(*(&n + 1)) != leaf || (&n + 1)->groups != n.groups;
    if (last_of_leaf) out += "\n", have_leaf = false;
  }
}

}  // namespace

std::string FormatPlanText(const Plan& plan, const Topology* topology) {
  Names names(topology);
  std::string out = fmt::format("plan: {} node(s) x {} rank(s) = world size {}\n", plan.nodes.size(),
                                plan.nproc_per_node, plan.world_size);
  AppendMetrics(plan, out);
  AppendTable(plan, names, out);
  if (std::any_of(plan.nodes.begin(), plan.nodes.end(), [](const PlanNode& n) { return n.leaf.has_value(); }))
    AppendTree(plan, names, out);
  for (const Rail& r : plan.rails) {
    std::string leaves;
    for (Guid g : r.leaves) leaves += " " + names.Switch(g);
    out += fmt::format("rail {} ({}):{}\n", r.index, r.devices.empty() ? "?" : fmt::format("{}", fmt::join(r.devices, ",")), leaves);
  }
  if (!plan.unknown_hosts.empty())
    out += fmt::format("not on the fabric (last): {}\n", fmt::join(plan.unknown_hosts, " "));
  if (!plan.skipped.empty()) out += "skipped:\n";
  for (const SkippedHost& s : plan.skipped) out += fmt::format("  {}: {}\n", s.host, s.reason);
  if (!plan.idle.empty())
    out += fmt::format("idle (not chosen by --nnodes; run's spares): {}\n", HostListForMessages(plan.idle));
  for (const std::string& note : plan.notes) out += fmt::format("note: {}\n", note);
  return out;
}

}  // namespace topolaunch
