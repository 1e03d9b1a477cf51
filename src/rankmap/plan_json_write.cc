#include <nlohmann/json.hpp>

#include "rankmap/plan_json.h"

#include "core/json_text.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

using ojson = nlohmann::ordered_json;

ojson OrNull(const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); }
ojson OrNull(const std::optional<int>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson RankJson(const RankBinding& r) {
  return ojson{{"local_rank", r.local_rank},
               {"gpu", OrNull(r.gpu)},
               {"numa", OrNull(r.numa)},
               {"cpus", r.cpus.empty() ? ojson(nullptr) : ojson(FormatCpuList(r.cpus))},
               {"nic", OrNull(r.nic)},
               {"cuda_index", OrNull(r.cuda_index)}};
}

ojson NodeJson(const PlanNode& n) {
  ojson local = ojson::array();
  for (const RankBinding& r : n.local) local.push_back(RankJson(r));
  ojson leaves = ojson::array();
  for (Guid g : n.leaves) leaves.push_back(FormatGuid(g));
  return ojson{{"host", n.host},
               {"node_rank", n.node_rank},
               {"leaf", n.leaf ? ojson(FormatGuid(*n.leaf)) : ojson(nullptr)},
               {"first_rank", n.first_rank},
               {"local", local},
               {"leaves", leaves},
               {"spine_group", n.groups.empty() ? ojson(nullptr) : ojson(n.groups.front())},
               {"groups", n.groups},
               {"nvlink_domain", n.nvlink_domain.empty() ? ojson(nullptr) : ojson(n.nvlink_domain)}};
}

ojson LevelJson(const LevelCrossings& l) {
  return ojson{{"level", l.level},
               {"name", l.name},
               {"crossings", l.crossings},
               {"lower_bound", l.lower_bound},
               {"hostname_order_crossings", l.hostname_order_crossings},
               {"given_order_crossings", l.given_order_crossings},
               {"tree_crossings", l.tree_crossings},
               {"tree_lower_bound", l.tree_lower_bound},
               {"hostname_order_tree_crossings", l.hostname_order_tree_crossings},
               {"given_order_tree_crossings", l.given_order_tree_crossings}};
}

ojson MetricsJson(const PlanMetrics& m) {
  ojson levels = ojson::array();
  for (const LevelCrossings& l : m.levels) levels.push_back(LevelJson(l));
  ojson j{{"ring_leaf_crossings", m.ring_leaf_crossings},
          {"ring_leaf_crossings_lower_bound", m.ring_leaf_crossings_lower_bound},
          {"hostname_order_ring_leaf_crossings", m.hostname_order_ring_leaf_crossings},
          {"given_order_ring_leaf_crossings", m.given_order_ring_leaf_crossings},
          {"levels", levels}};
  if (const std::optional<LevelCrossings>& d = m.nvlink_domain) {
    j["ring_nvlink_domain_crossings"] = d->crossings;
    j["ring_nvlink_domain_crossings_lower_bound"] = d->lower_bound;
    j["hostname_order_ring_nvlink_domain_crossings"] = d->hostname_order_crossings;
    j["nvlink_domain"] = LevelJson(*d);
  }
  return j;
}

}  // namespace

std::string FormatPlanJson(const Plan& plan) {
  ojson nodes = ojson::array();
  for (const PlanNode& n : plan.nodes) nodes.push_back(NodeJson(n));
  ojson skipped = ojson::array();
  for (const SkippedHost& s : plan.skipped) skipped.push_back(ojson{{"host", s.host}, {"reason", s.reason}});
  ojson rails = ojson::array();
  for (const Rail& r : plan.rails) {
    ojson leaves = ojson::array();
    for (Guid g : r.leaves) leaves.push_back(FormatGuid(g));
    rails.push_back(ojson{{"rail", r.index}, {"devices", r.devices}, {"leaves", leaves}});
  }
  ojson doc{{"schema", kPlanSchema},
            {"nproc_per_node", plan.nproc_per_node},
            {"world_size", plan.world_size},
            {"nodes", nodes},
            {"metrics", MetricsJson(plan.metrics)},
            {"fabric", plan.fabric},
            {"env", ojson{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}},
            {"unknown_hosts", plan.unknown_hosts},
            {"skipped", skipped},
            {"rails", rails},
            {"notes", plan.notes}};
  return DumpJsonText(doc, 2) + "\n";
}

}  // namespace topolaunch
