// The plan's JSON, written straight out (core/json_writer.h): a plan of
// 100,000 ranks is the largest document topolaunch writes, and building it
// as a DOM first cost more than planning it.
#include "rankmap/plan_json.h"

#include <algorithm>

#include "core/json_writer.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

void WriteRank(JsonWriter& w, const RankBinding& r) {
  w.BeginObject();
  w.Key("local_rank").Int(r.local_rank);
  w.Key("gpu").StringOrNull(r.gpu);
  w.Key("numa").IntOrNull(r.numa);
  w.Key("cpus");
  if (r.cpus.empty()) w.Null();
  else w.String(FormatCpuList(r.cpus));
  w.Key("nic").StringOrNull(r.nic);
  w.Key("cuda_index").IntOrNull(r.cuda_index);
  w.EndObject();
}

void WriteGuids(JsonWriter& w, const std::vector<Guid>& guids) {
  w.BeginArray();
  for (Guid g : guids) w.String(FormatGuid(g));
  w.EndArray();
}

void WriteNode(JsonWriter& w, const PlanNode& n) {
  w.BeginObject();
  w.Key("host").String(n.host);
  w.Key("node_rank").Int(n.node_rank);
  w.Key("leaf");
  if (n.leaf) w.String(FormatGuid(*n.leaf));
  else w.Null();
  w.Key("first_rank").Int(n.first_rank);
  w.Key("local").BeginArray();
  for (const RankBinding& r : n.local) WriteRank(w, r);
  w.EndArray();
  w.Key("leaves");
  WriteGuids(w, n.leaves);
  w.Key("spine_group");
  if (n.groups.empty()) w.Null();
  else w.Int(n.groups.front());
  w.Key("groups").Ints(n.groups);
  w.Key("nvlink_domain").StringOrNull(n.nvlink_domain);
  w.EndObject();
}

void WriteLevel(JsonWriter& w, const LevelCrossings& l) {
  w.BeginObject();
  w.Key("level").Int(l.level);
  w.Key("name").String(l.name);
  w.Key("crossings").Int(l.crossings);
  w.Key("lower_bound").Int(l.lower_bound);
  w.Key("hostname_order_crossings").Int(l.hostname_order_crossings);
  w.Key("given_order_crossings").Int(l.given_order_crossings);
  w.Key("tree_crossings").Int(l.tree_crossings);
  w.Key("tree_lower_bound").Int(l.tree_lower_bound);
  w.Key("hostname_order_tree_crossings").Int(l.hostname_order_tree_crossings);
  w.Key("given_order_tree_crossings").Int(l.given_order_tree_crossings);
  w.EndObject();
}

void WriteMetrics(JsonWriter& w, const PlanMetrics& m) {
  w.BeginObject();
  w.Key("ring_leaf_crossings").Int(m.ring_leaf_crossings);
  w.Key("ring_leaf_crossings_lower_bound").Int(m.ring_leaf_crossings_lower_bound);
  w.Key("hostname_order_ring_leaf_crossings").Int(m.hostname_order_ring_leaf_crossings);
  w.Key("given_order_ring_leaf_crossings").Int(m.given_order_ring_leaf_crossings);
  w.Key("levels").BeginArray();
  for (const LevelCrossings& l : m.levels) WriteLevel(w, l);
  w.EndArray();
  if (const std::optional<LevelCrossings>& d = m.nvlink_domain) {
    w.Key("ring_nvlink_domain_crossings").Int(d->crossings);
    w.Key("ring_nvlink_domain_crossings_lower_bound").Int(d->lower_bound);
    w.Key("hostname_order_ring_nvlink_domain_crossings").Int(d->hostname_order_crossings);
    w.Key("nvlink_domain");
    WriteLevel(w, *d);
  }
  w.EndObject();
}

}  // namespace

std::string FormatPlanJson(const Plan& plan) {
  JsonWriter w(2);
  // About 200 bytes a rank and 100 a node in the file, 300 and 600 with
  // room to spare.
  w.Reserve(4096 + plan.nodes.size() * 600 + static_cast<size_t>(std::max(plan.world_size, 0)) * 300);
  w.BeginObject();
  w.Key("schema").String(kPlanSchema);
  w.Key("nproc_per_node").Int(plan.nproc_per_node);
  w.Key("world_size").Int(plan.world_size);
  w.Key("nodes").BeginArray();
  for (const PlanNode& n : plan.nodes) WriteNode(w, n);
  w.EndArray();
  w.Key("metrics");
  WriteMetrics(w, plan.metrics);
  w.Key("fabric").String(plan.fabric);
  w.Key("env").BeginObject().Key("CUDA_DEVICE_ORDER").String("PCI_BUS_ID").EndObject();
  w.Key("unknown_hosts").Strings(plan.unknown_hosts);
  w.Key("skipped").BeginArray();
  for (const SkippedHost& s : plan.skipped) w.BeginObject().Key("host").String(s.host).Key("reason").String(s.reason).EndObject();
  w.EndArray();
  if (!plan.idle.empty()) w.Key("idle").Strings(plan.idle);
  w.Key("rails").BeginArray();
  for (const Rail& r : plan.rails) {
    w.BeginObject().Key("rail").Int(r.index).Key("devices").Strings(r.devices).Key("leaves");
    WriteGuids(w, r.leaves);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes").Strings(plan.notes);
  w.EndObject();
  std::string text = w.Take();
  text += '\n';
  return text;
}

}  // namespace topolaunch
