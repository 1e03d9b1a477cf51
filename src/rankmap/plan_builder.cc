#include "rankmap/plan_builder.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/hostlist.h"
#include "rankmap/bindings.h"
#include "rankmap/fabric_groups.h"
#include "rankmap/node_choice.h"
#include "rankmap/rank_map.h"
#include "rankmap/ring_metrics.h"

namespace topolaunch {

namespace {

using HostIndex = std::unordered_map<std::string, const TopologyHost*>;

struct Pool {
  std::vector<std::string> usable;  // given order
  std::vector<SkippedHost> skipped;
};

Result<Pool> FilterPool(const std::vector<std::string>& hosts, const PlanRequest& request) {
  Pool pool;
  std::unordered_set<std::string> seen;
  std::set<std::string> excluded(request.exclude.begin(), request.exclude.end());
  for (const std::string& host : hosts) {
    if (!seen.insert(host).second)
      return Error(ErrorCode::kBadInput, "hosts", fmt::format("host \"{}\" is listed twice", host));
    if (excluded.contains(host)) pool.skipped.push_back({host, "excluded (--exclude)"});
    else if (auto it = request.unhealthy.find(host); it != request.unhealthy.end())
      pool.skipped.push_back({host, "unhealthy: " + it->second});
    else pool.usable.push_back(host);
  }
  if (pool.usable.empty())
    return Error(ErrorCode::kBadUsage, "hosts", hosts.empty() ? "no hosts to plan" : "every host was excluded or unhealthy");
  return pool;
}

// Applies --nnodes: fabric hosts chosen by ChooseNodes, then (only with
// allow_unknown) hosts off the fabric.
Result<std::vector<std::string>> Choose(const FabricGroups* groups, Pool& pool, const PlanRequest& request) {
  if (!request.nnodes) return pool.usable;
  size_t want = static_cast<size_t>(std::max(0, *request.nnodes));
  if (want == 0 || want > pool.usable.size())
    return Error(ErrorCode::kBadUsage, "--nnodes",
                 fmt::format("{} nodes asked for, but the pool has {} usable host(s)", *request.nnodes, pool.usable.size()));
  if (!groups) return std::vector<std::string>(pool.usable.begin(), pool.usable.begin() + want);
  std::vector<std::string> known, unknown;
  for (const std::string& h : pool.usable) (groups->hosts.contains(h) ? known : unknown).push_back(h);
  size_t from_fabric = std::min(want, known.size());
  std::vector<std::string> chosen;
  if (from_fabric > 0) {
    Result<std::vector<std::string>> picked = ChooseNodes(*groups, known, static_cast<int>(from_fabric));
    if (!picked.ok()) return picked.take_error();
    chosen = std::move(*picked);
  }
  unknown = NaturalSorted(std::move(unknown));
  size_t extra = want - from_fabric;
  if (extra > 0 && !request.allow_unknown)
    return Error(ErrorCode::kBadUsage, "--nnodes",
                 fmt::format("{} nodes asked for, but only {} usable host(s) are on the fabric ({} are not: {}; "
                             "--allow-unknown uses them)", want, known.size(), unknown.size(), HostListForMessages(unknown)));
  chosen.insert(chosen.end(), unknown.begin(), unknown.begin() + extra);
  for (size_t i = extra; i < unknown.size(); ++i) pool.skipped.push_back({unknown[i], "not on the fabric"});
  return chosen;
}

Result<int> DefaultNproc(const std::vector<std::string>& hosts, const HostIndex& index, const PlanRequest& request) {
  if (request.nproc_per_node) {
    if (*request.nproc_per_node < 1 || *request.nproc_per_node > 4096)
      return Error(ErrorCode::kBadUsage, "--nproc-per-node", fmt::format("{}: expected 1..4096", *request.nproc_per_node));
    return *request.nproc_per_node;
  }
  auto gpus = [&](const TopologyHost& h) {
    return request.cuda_visible_devices ? request.cuda_visible_devices->size() : h.layout->gpus.size();
  };
  std::optional<size_t> common;
  bool agree = true;
  for (const std::string& host : hosts) {
    auto it = index.find(host);
    const TopologyHost* h = it == index.end() ? nullptr : it->second;
    if (!h || !h->layout) return Error(ErrorCode::kBadUsage, "--nproc-per-node",
                                       fmt::format("required: the layout of {} is unknown, so its GPUs cannot be counted", host));
    if (!common) common = gpus(*h);
    agree = agree && gpus(*h) == *common;
  }
  if (agree && common && *common > 0) return static_cast<int>(*common);
  std::map<size_t, std::vector<std::string>> by_count;
  for (const std::string& host : hosts) by_count[gpus(*index.at(host))].push_back(host);
  std::string detail;
  for (const auto& [count, names] : by_count) detail += fmt::format("{}{} GPU(s) on {}", detail.empty() ? "" : ", ", count, HostListForMessages(names));
  return Error(ErrorCode::kBadUsage, "--nproc-per-node", fmt::format("required: hosts do not agree on one GPU count ({})", detail));
}

// Fills each node's place: leaf, leaves, groups renumbered by first appearance.
void PlaceNodes(const FabricGroups& groups, std::vector<PlanNode>& nodes) {
  std::vector<std::unordered_map<int, int>> renumber(groups.group_levels);
  for (PlanNode& node : nodes) {
    auto it = groups.hosts.find(node.host);
    if (it == groups.hosts.end()) continue;
    node.leaf = it->second.rail0_leaf;
    node.leaves = it->second.leaves;
    for (int l = 0; l < groups.group_levels; ++l)
      node.groups.push_back(renumber[l].emplace(it->second.groups[l], static_cast<int>(renumber[l].size())).first->second);
  }
}

// What ComputeBindings reads from a layout (not its hostname or source).
bool SameBindingInputs(const HostLayout& a, const HostLayout& b) {
  return a.cores == b.cores && a.pus == b.pus && a.numa_nodes == b.numa_nodes && a.gpus == b.gpus &&
         a.nics == b.nics && a.gpu_nic_paths == b.gpu_nic_paths;
}

// Clusters are mostly identical machines: a host whose layout and fabric
// devices match an earlier host's (and whose bindings needed no note, which
// would name the host) reuses them. Keeps 100,000 ranks well under 100 ms.
class BindingCache {
 public:
  const std::vector<RankBinding>* Find(const HostLayout& layout, const std::vector<std::string>& devices) const {
    for (const Entry& e : entries_)
      if (e.devices == devices && SameBindingInputs(*e.layout, layout)) return &e.ranks;
    return nullptr;
  }
  void Add(const HostLayout* layout, std::vector<std::string> devices, const std::vector<RankBinding>& ranks) {
    if (entries_.size() < 8) entries_.push_back({layout, std::move(devices), ranks});
  }

 private:
  struct Entry {
    const HostLayout* layout;
    std::vector<std::string> devices;
    std::vector<RankBinding> ranks;
  };
  std::vector<Entry> entries_;
};

Status BindAll(const HostIndex& index, const PlanRequest& request, Plan& plan) {
  std::vector<Problem> problems;
  ErrorCode code = ErrorCode::kBadInput;
  std::vector<std::string> unbound;
  BindingCache cache;
  for (PlanNode& node : plan.nodes) {
    auto it = index.find(node.host);
    const TopologyHost* host = it == index.end() ? nullptr : it->second;
    const HostLayout* layout = host && host->layout ? &*host->layout : nullptr;
    BindingOptions options{plan.nproc_per_node, request.cuda_visible_devices, {}};
    if (host) for (const HcaAttachment& hca : host->hcas) if (!hca.device.empty()) options.fabric_devices.push_back(hca.device);
    if (layout) {
      if (const std::vector<RankBinding>* cached = cache.Find(*layout, options.fabric_devices)) {
        node.local = *cached;
        continue;
      }
    }
    Result<HostBindings> bound = ComputeBindings(layout, node.host, options);
    if (!bound.ok()) {
      code = bound.error().code;
      problems.insert(problems.end(), bound.error().problems.begin(), bound.error().problems.end());
      continue;
    }
    node.local = std::move(bound->ranks);
    if (!layout) unbound.push_back(node.host);  // one note for all of them
    else if (bound->notes.empty()) cache.Add(layout, std::move(options.fabric_devices), node.local);
    else plan.notes.insert(plan.notes.end(), bound->notes.begin(), bound->notes.end());
  }
  if (!problems.empty()) return Error(code, std::move(problems));
  if (!unbound.empty())
    plan.notes.push_back(fmt::format("layout unknown (no hwloc data in the topology), ranks not bound: {}",
                                     HostListForMessages(unbound)));
  return Ok{};
}

}  // namespace

Result<Plan> ComputePlan(const Topology* topology, const PlanRequest& request) {
  HostIndex index;
  std::vector<std::string> all;
  if (topology) for (const TopologyHost& h : topology->hosts) index.emplace(h.name, &h), all.push_back(h.name);
  Result<Pool> pool = FilterPool(request.hosts.empty() ? all : request.hosts, request);
  if (!pool.ok()) return pool.take_error();
  // A topology without switches (discover --fabric none: layouts only)
  // places nobody: plan it like no fabric at all, but keep the layouts.
  std::optional<FabricGroups> groups;
  if (topology && !topology->switches.empty()) groups = ComputeFabricGroups(*topology);
  NvlinkDomains domains = groups ? groups->nvlink : topology ? ComputeNvlinkDomains(*topology) : NvlinkDomains{};
  Result<std::vector<std::string>> chosen = Choose(groups ? &*groups : nullptr, *pool, request);
  if (!chosen.ok()) return chosen.take_error();

  Plan plan;
  plan.fabric = groups ? "known" : "none";
  plan.skipped = std::move(pool->skipped);
  std::vector<std::string> order = *chosen;
  if (groups) {
    Result<RankMap> map = ComputeRankMap(*groups, *chosen, request.allow_unknown);
    if (!map.ok()) return map.take_error();
    order = std::move(map->order);
    plan.unknown_hosts = std::move(map->unknown);
  } else if (!domains.empty()) {
    order = KeepNvlinkDomainsTogether(order, domains);
    plan.notes.push_back("the topology has no fabric (no switches): hosts keep the given order, each NVLink domain "
                         "together where its first host is");
  } else {
    plan.notes.push_back(topology ? "the topology has no fabric (no switches): hosts keep the given order"
                                  : "no topology: hosts keep the given order");
  }
  if (!plan.unknown_hosts.empty())
    plan.notes.push_back(fmt::format("not on the fabric, placed last: {}", HostListForMessages(plan.unknown_hosts)));
  if (request.nnodes && pool->usable.size() > order.size()) {
    plan.notes.push_back(fmt::format("{} of {} usable host(s) chosen", order.size(), pool->usable.size()));
    // A usable host off the fabric that --nnodes left out is skipped ("not
    // on the fabric"), not idle: run takes no spare it could not plan.
    std::unordered_set<std::string_view> planned(order.begin(), order.end());
    std::unordered_set<std::string_view> skipped;
    for (const SkippedHost& s : plan.skipped) skipped.insert(s.host);
    for (const std::string& h : pool->usable)
      if (!planned.contains(h) && !skipped.contains(h)) plan.idle.push_back(h);
    plan.idle = NaturalSorted(std::move(plan.idle));
  }

  Result<int> nproc = DefaultNproc(order, index, request);
  if (!nproc.ok()) return nproc.take_error();
  plan.nproc_per_node = *nproc;
  plan.world_size = plan.nproc_per_node * static_cast<int>(order.size());
  plan.nodes.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    PlanNode& node = plan.nodes[i];
    node.host = order[i];
    node.node_rank = static_cast<int>(i);
    node.first_rank = node.node_rank * plan.nproc_per_node;
  }
  if (groups) PlaceNodes(*groups, plan.nodes);
  if (!domains.empty())
    for (PlanNode& node : plan.nodes)
      if (const NvlinkDomain* d = domains.Find(node.host)) node.nvlink_domain = d->name;
  if (Status bound = BindAll(index, request, plan); !bound.ok()) return bound.take_error();

  std::unordered_set<std::string> in_plan(order.begin(), order.end());
  std::vector<std::string> given;
  for (const std::string& h : pool->usable) if (in_plan.contains(h)) given.push_back(h);
  plan.metrics = ComputeMetrics(groups ? &*groups : nullptr, order, given, &domains);
  if (groups) plan.rails = DescribeRails(*groups, order);
  return plan;
}

}  // namespace topolaunch
