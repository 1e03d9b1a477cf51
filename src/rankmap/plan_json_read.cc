// Reading plan.json back, checking that its parts agree with each other:
// `run` starts ranks from it, so a hand-edited plan with a gap in the node
// ranks or a missing local rank must fail here, not on a node.
#include <set>

#include <fmt/format.h>

#include "core/json_checker.h"
#include "rankmap/plan_json.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

using nlohmann::json;

bool Present(const json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && !it->is_null();
}

// Nullable fields: null (or absent) reads as "not set".
std::string NullableString(JsonChecker& c, const json& o, const std::string& path, std::string_view key) {
  return Present(o, key) ? c.String(o, path, key).value_or("") : "";
}
std::optional<int> NullableInt(JsonChecker& c, const json& o, const std::string& path, std::string_view key) {
  if (!Present(o, key)) return std::nullopt;
  auto v = c.Integer(o, path, key, 0, 1 << 20);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

RankBinding ReadRank(JsonChecker& c, const json& o, const std::string& path) {
  RankBinding r;
  r.local_rank = static_cast<int>(c.Integer(o, path, "local_rank", 0, 1 << 20).value_or(-1));
  r.gpu = NullableString(c, o, path, "gpu");
  r.numa = NullableInt(c, o, path, "numa");
  r.nic = NullableString(c, o, path, "nic");
  r.cuda_index = NullableInt(c, o, path, "cuda_index");
  std::string cpus = NullableString(c, o, path, "cpus");
  if (!cpus.empty()) {
    Result<std::vector<int>> list = ParseCpuList(cpus, JsonPath(path, "cpus"));
    if (list.ok()) r.cpus = *list;
    else for (const Problem& p : list.error().problems) c.Report(p.where, p.what);
  }
  return r;
}

PlanNode ReadNode(JsonChecker& c, const json& o, const std::string& path, int nproc) {
  PlanNode n;
  n.host = c.String(o, path, "host").value_or("");
  n.node_rank = static_cast<int>(c.Integer(o, path, "node_rank", 0, 1 << 24).value_or(-1));
  n.first_rank = static_cast<int>(c.Integer(o, path, "first_rank", 0, 1 << 30).value_or(-1));
  if (Present(o, "leaf")) n.leaf = c.GuidString(o, path, "leaf");
  if (const json* leaves = c.Array(o, path, "leaves", false))
    for (size_t i = 0; i < leaves->size(); ++i) {
      std::string p = JsonIndex(JsonPath(path, "leaves"), i);
      std::optional<Guid> g = (*leaves)[i].is_string() ? ParseGuid((*leaves)[i].get<std::string>()) : std::nullopt;
      if (g) n.leaves.push_back(*g);
      else c.Report(p, "expected a GUID string \"0x...\"");
    }
  if (const json* groups = c.Array(o, path, "groups", false))
    for (size_t i = 0; i < groups->size(); ++i) {
      if ((*groups)[i].is_number_integer()) n.groups.push_back((*groups)[i].get<int>());
      else c.Report(JsonIndex(JsonPath(path, "groups"), i), "expected an integer");
    }
  if (Present(o, "nvlink_domain")) n.nvlink_domain = c.String(o, path, "nvlink_domain").value_or("");
  const json* local = c.Array(o, path, "local");
  if (!local) return n;
  std::string lpath = JsonPath(path, "local");
  for (size_t i = 0; i < local->size(); ++i) {
    std::string p = JsonIndex(lpath, i);
    if (!(*local)[i].is_object()) { c.Report(p, "expected an object"); continue; }
    n.local.push_back(ReadRank(c, (*local)[i], p));
    if (n.local.back().local_rank != static_cast<int>(i)) c.Report(JsonPath(p, "local_rank"), fmt::format("expected {}", i));
  }
  if (nproc > 0 && local->size() != static_cast<size_t>(nproc))
    c.Report(lpath, fmt::format("{} local ranks, expected nproc_per_node = {}", local->size(), nproc));
  if (n.node_rank >= 0 && nproc > 0 && n.first_rank != n.node_rank * nproc)
    c.Report(JsonPath(path, "first_rank"), fmt::format("{}, expected node_rank x nproc_per_node = {}", n.first_rank, n.node_rank * nproc));
  return n;
}

LevelCrossings ReadLevel(JsonChecker& c, const json& l, const std::string& p) {
  auto n = [&](std::string_view key, bool required = true) {
    return static_cast<int>(c.Integer(l, p, key, 0, 1 << 30, required).value_or(0));
  };
  // The tree counts came later: plans written before them still read.
  return {n("level"), c.String(l, p, "name").value_or(""), n("crossings"), n("lower_bound"),
          n("hostname_order_crossings"), n("given_order_crossings"), n("tree_crossings", false),
          n("tree_lower_bound", false), n("hostname_order_tree_crossings", false),
          n("given_order_tree_crossings", false)};
}

void ReadMetrics(JsonChecker& c, const json& doc, PlanMetrics& m) {
  const json* o = c.Object(doc, "$", "metrics");
  if (!o) return;
  auto count = [&](std::string_view key, bool required = true) {
    return static_cast<int>(c.Integer(*o, "$.metrics", key, 0, 1 << 30, required).value_or(0));
  };
  m.ring_leaf_crossings = count("ring_leaf_crossings");
  m.ring_leaf_crossings_lower_bound = count("ring_leaf_crossings_lower_bound");
  m.hostname_order_ring_leaf_crossings = count("hostname_order_ring_leaf_crossings");
  m.given_order_ring_leaf_crossings = count("given_order_ring_leaf_crossings", false);
  const json* levels = c.Array(*o, "$.metrics", "levels", false);
  for (size_t i = 0; levels && i < levels->size(); ++i) {
    std::string p = JsonIndex("$.metrics.levels", i);
    const json& l = (*levels)[i];
    if (!l.is_object()) { c.Report(p, "expected an object"); continue; }
    m.levels.push_back(ReadLevel(c, l, p));
  }
  if (const json* d = c.Object(*o, "$.metrics", "nvlink_domain", false))
    m.nvlink_domain = ReadLevel(c, *d, "$.metrics.nvlink_domain");
}

void ReadExtras(JsonChecker& c, const json& doc, Plan& plan) {
  plan.fabric = c.String(doc, "$", "fabric", false).value_or("known");
  plan.unknown_hosts = c.StringArray(doc, "$", "unknown_hosts", false);
  plan.notes = c.StringArray(doc, "$", "notes", false);
  plan.idle = c.StringArray(doc, "$", "idle", false);
  const json* skipped = c.Array(doc, "$", "skipped", false);
  for (size_t i = 0; skipped && i < skipped->size(); ++i) {
    std::string p = JsonIndex("$.skipped", i);
    plan.skipped.push_back({c.String((*skipped)[i], p, "host").value_or(""), c.String((*skipped)[i], p, "reason").value_or("")});
  }
  const json* rails = c.Array(doc, "$", "rails", false);
  for (size_t i = 0; rails && i < rails->size(); ++i) {
    std::string p = JsonIndex("$.rails", i);
    Rail r;
    r.index = static_cast<int>(c.Integer((*rails)[i], p, "rail", 0, 1024).value_or(0));
    r.devices = c.StringArray((*rails)[i], p, "devices");
    for (const std::string& g : c.StringArray((*rails)[i], p, "leaves"))
      if (auto guid = ParseGuid(g)) r.leaves.push_back(*guid);
    plan.rails.push_back(r);
  }
}

}  // namespace

Result<Plan> ParsePlanJson(std::string_view text, std::string_view file_name) {
  Result<json> doc = ParseJsonText(text, file_name);
  if (!doc.ok()) return doc.take_error();
  JsonChecker c{std::string(file_name)};
  Plan plan;
  if (!doc->is_object()) {
    c.Report("$", "expected a JSON object (topolaunch plan --json output)");
    return c.TakeError();
  }
  std::optional<std::string> schema = c.String(*doc, "$", "schema");
  if (schema && *schema != kPlanSchema) c.Report("$.schema", fmt::format("\"{}\": expected \"{}\"", *schema, kPlanSchema));
  plan.nproc_per_node = static_cast<int>(c.Integer(*doc, "$", "nproc_per_node", 1, 4096).value_or(0));
  plan.world_size = static_cast<int>(c.Integer(*doc, "$", "world_size", 1, 1 << 30).value_or(0));
  const json* nodes = c.Array(*doc, "$", "nodes");
  std::set<std::string> hosts;
  for (size_t i = 0; nodes && i < nodes->size(); ++i) {
    std::string p = JsonIndex("$.nodes", i);
    if (!(*nodes)[i].is_object()) { c.Report(p, "expected an object"); continue; }
    plan.nodes.push_back(ReadNode(c, (*nodes)[i], p, plan.nproc_per_node));
    const PlanNode& n = plan.nodes.back();
    if (n.node_rank != static_cast<int>(i)) c.Report(JsonPath(p, "node_rank"), fmt::format("expected {} (nodes are in node-rank order)", i));
    if (!n.host.empty() && !hosts.insert(n.host).second) c.Report(JsonPath(p, "host"), fmt::format("\"{}\" appears twice", n.host));
  }
  if (nodes && nodes->empty()) c.Report("$.nodes", "expected at least one node");
  if (nodes && plan.nproc_per_node > 0 && plan.world_size != plan.nproc_per_node * static_cast<int>(nodes->size()))
    c.Report("$.world_size", fmt::format("{}, expected nproc_per_node x nodes = {}", plan.world_size,
                                         plan.nproc_per_node * static_cast<int>(nodes->size())));
  ReadMetrics(c, *doc, plan.metrics);
  ReadExtras(c, *doc, plan);
  if (!c.ok()) return c.TakeError();
  return plan;
}

}  // namespace topolaunch
