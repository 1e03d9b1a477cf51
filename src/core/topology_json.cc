// topology.json: the model <-> JSON, with every reading problem reported.
//
// Writing uses nlohmann::ordered_json so keys come out in the order SPEC.md
// shows them, which keeps diffs of two discoveries readable. Reading goes
// through JsonChecker, so a hand-edited file with five mistakes gets five
// messages, each with its JSON path.
#include "topolaunch/topology_json.h"

#include <fmt/format.h>

#include "core/json_checker.h"
#include "core/json_text.h"
#include "core/layout_json.h"
#include "core/nvlink_domains.h"

namespace topolaunch {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json PortRefJson(const PortRef& ref) { return {{"guid", FormatGuid(ref.node_guid)}, {"port", ref.port}}; }

ordered_json HcaJson(const HcaAttachment& a) {
  ordered_json j;
  j["guid"] = FormatGuid(a.guid);
  if (a.port_guid) j["port_guid"] = FormatGuid(a.port_guid);
  j["description"] = a.description;
  if (!a.device.empty()) j["device"] = a.device;
  j["port"] = a.port;
  j["switch_guid"] = a.switch_guid ? ordered_json(FormatGuid(*a.switch_guid)) : ordered_json(nullptr);
  j["switch_port"] = a.switch_port ? ordered_json(*a.switch_port) : ordered_json(nullptr);
  j["width"] = a.width;
  j["speed"] = a.speed;
  j["rate_gbps"] = a.rate_gbps ? ordered_json(*a.rate_gbps) : ordered_json(nullptr);
  return j;
}

ordered_json ToJson(const Topology& t) {
  ordered_json doc;
  doc["schema"] = kTopologySchema;
  doc["generated"] = {{"by", t.generated.by}, {"at", t.generated.at}, {"fabric_source", t.generated.fabric_source}};
  ordered_json& switches = doc["switches"] = ordered_json::array();
  for (const TopologySwitch& s : t.switches)
    switches.push_back({{"guid", FormatGuid(s.guid)}, {"name", s.name}, {"level", s.level}, {"ports", s.ports}});
  ordered_json& hosts = doc["hosts"] = ordered_json::array();
  for (const TopologyHost& h : t.hosts) {
    ordered_json host = {{"name", h.name}, {"hcas", ordered_json::array()}};
    for (const HcaAttachment& a : h.hcas) host["hcas"].push_back(HcaJson(a));
    if (h.layout) host["layout"] = ordered_json::parse(DumpJsonText(LayoutToJson(*h.layout), -1));
    hosts.push_back(std::move(host));
  }
  ordered_json& links = doc["links"] = ordered_json::array();
  for (const TopologyLink& l : t.links)
    links.push_back({{"from", PortRefJson(l.from)}, {"to", PortRefJson(l.to)}, {"width", l.width},
                     {"speed", l.speed}, {"state", l.state.empty() ? ordered_json(nullptr) : ordered_json(l.state)}});
  ordered_json& unmapped = doc["unmapped"] = ordered_json::array();
  for (const UnmappedCa& u : t.unmapped)
    unmapped.push_back({{"guid", FormatGuid(u.guid)}, {"description", u.description}, {"reason", u.reason}});
  // A view of the layouts (nvlink_domains.h), written for people and
  // scripts; readers recompute it and check that the two agree.
  doc["nvlink_domains"] = NvlinkDomainsToJson(ComputeNvlinkDomains(t));
  return doc;
}

// --- reading ---------------------------------------------------------------

bool IsNull(const json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_null();
}

std::optional<PortRef> ReadPortRef(JsonChecker& c, const json& parent, const std::string& path, std::string_view key) {
  const json* ref = c.Object(parent, path, key);
  if (!ref) return std::nullopt;
  std::string p = JsonPath(path, key);
  auto guid = c.GuidString(*ref, p, "guid");
  auto port = c.Integer(*ref, p, "port", 0, 255);
  if (!guid || !port) return std::nullopt;
  return PortRef{*guid, static_cast<int>(*port)};
}

HcaAttachment ReadHca(JsonChecker& c, const json& j, const std::string& p) {
  HcaAttachment a;
  a.guid = c.GuidString(j, p, "guid").value_or(0);
  a.port_guid = c.GuidString(j, p, "port_guid", false).value_or(0);
  a.description = c.String(j, p, "description").value_or("");
  a.device = c.String(j, p, "device", false).value_or("");
  a.port = static_cast<int>(c.Integer(j, p, "port", 0, 255).value_or(0));
  if (!IsNull(j, "switch_guid")) a.switch_guid = c.GuidString(j, p, "switch_guid", false);
  if (!IsNull(j, "switch_port"))
    if (auto sp = c.Integer(j, p, "switch_port", 0, 255, false)) a.switch_port = static_cast<int>(*sp);
  a.width = c.String(j, p, "width", false).value_or("");
  a.speed = c.String(j, p, "speed", false).value_or("");
  if (!IsNull(j, "rate_gbps")) a.rate_gbps = c.Number(j, p, "rate_gbps", false);
  return a;
}

template <typename Fn>
void ForEachObject(JsonChecker& c, const json& doc, std::string_view key, Fn&& fn) {
  const json* array = c.Array(doc, "$", key);
  if (!array) return;
  std::string base = JsonPath("$", key);
  for (size_t i = 0; i < array->size(); ++i) {
    std::string p = JsonIndex(base, i);
    if (!(*array)[i].is_object()) {
      c.Report(p, "expected an object");
      continue;
    }
    fn((*array)[i], p);
  }
}

void ReadHosts(JsonChecker& c, const json& doc, Topology& t) {
  ForEachObject(c, doc, "hosts", [&](const json& j, const std::string& p) {
    TopologyHost h;
    h.name = c.String(j, p, "name").value_or("");
    if (!h.name.empty() && !IsValidHostName(h.name))
      c.Report(JsonPath(p, "name"), fmt::format("\"{}\" is not a valid host name", h.name));
    if (const json* hcas = c.Array(j, p, "hcas"))
      for (size_t k = 0; k < hcas->size(); ++k) {
        std::string hp = JsonIndex(JsonPath(p, "hcas"), k);
        if ((*hcas)[k].is_object()) h.hcas.push_back(ReadHca(c, (*hcas)[k], hp));
        else c.Report(hp, "expected an object");
      }
    if (const json* layout = c.Object(j, p, "layout", false)) {
      Result<HostLayout> l = LayoutFromJson(*layout, JsonPath(p, "layout"));
      if (l.ok()) h.layout = std::move(l).value();
      else
        for (const Problem& problem : l.error().problems) c.Report(problem.where, problem.what);
    }
    t.hosts.push_back(std::move(h));
  });
}

void ReadRest(JsonChecker& c, const json& doc, Topology& t) {
  ForEachObject(c, doc, "switches", [&](const json& j, const std::string& p) {
    TopologySwitch s;
    s.guid = c.GuidString(j, p, "guid").value_or(0);
    s.name = c.String(j, p, "name").value_or("");
    s.level = static_cast<int>(c.Integer(j, p, "level", 0, 64).value_or(0));
    s.ports = static_cast<int>(c.Integer(j, p, "ports", 0, 255).value_or(0));
    t.switches.push_back(std::move(s));
  });
  ForEachObject(c, doc, "links", [&](const json& j, const std::string& p) {
    TopologyLink l;
    l.from = ReadPortRef(c, j, p, "from").value_or(PortRef{});
    l.to = ReadPortRef(c, j, p, "to").value_or(PortRef{});
    l.width = c.String(j, p, "width", false).value_or("");
    l.speed = c.String(j, p, "speed", false).value_or("");
    if (!IsNull(j, "state")) l.state = c.String(j, p, "state", false).value_or("");
    t.links.push_back(std::move(l));
  });
  ForEachObject(c, doc, "unmapped", [&](const json& j, const std::string& p) {
    UnmappedCa u;
    u.guid = c.GuidString(j, p, "guid").value_or(0);
    u.description = c.String(j, p, "description").value_or("");
    u.reason = c.String(j, p, "reason").value_or("");
    t.unmapped.push_back(std::move(u));
  });
}

// Cross-references: an attachment's switch must be a listed switch.
void CheckReferences(JsonChecker& c, const Topology& t) {
  for (size_t i = 0; i < t.hosts.size(); ++i)
    for (size_t k = 0; k < t.hosts[i].hcas.size(); ++k) {
      const HcaAttachment& a = t.hosts[i].hcas[k];
      if (a.switch_guid && *a.switch_guid && !t.FindSwitch(*a.switch_guid))
        c.Report(JsonPath(JsonIndex(JsonPath(JsonIndex("$.hosts", i), "hcas"), k), "switch_guid"),
                 fmt::format("switch {} is not in $.switches", FormatGuid(*a.switch_guid)));
    }
}

}  // namespace

std::string FormatTopologyJson(const Topology& topology) { return DumpJsonText(ToJson(topology), 2) + "\n"; }

Result<Topology> ParseTopologyJson(std::string_view text, std::string_view file_name) {
  Result<json> parsed = ParseJsonText(text, file_name);
  if (!parsed.ok()) return parsed.take_error();
  const json& doc = *parsed;
  JsonChecker c{std::string(file_name)};
  if (!doc.is_object()) {
    c.Report("$", "expected a JSON object (a topology.json written by topolaunch discover)");
    return c.TakeError();
  }
  std::optional<std::string> schema = c.String(doc, "$", "schema");
  if (schema && *schema != kTopologySchema) {
    c.Report("$.schema", fmt::format("expected \"{}\", found \"{}\"", kTopologySchema, *schema));
    return c.TakeError();  // another schema: the rest would only add noise
  }
  Topology t;
  if (const json* g = c.Object(doc, "$", "generated")) {
    t.generated.by = c.String(*g, "$.generated", "by").value_or("");
    t.generated.at = c.String(*g, "$.generated", "at").value_or("");
    t.generated.fabric_source = c.String(*g, "$.generated", "fabric_source").value_or("");
  }
  ReadRest(c, doc, t);
  ReadHosts(c, doc, t);
  if (c.ok()) CheckReferences(c, t);
  if (!c.ok()) return c.TakeError();
  // Optional: files written before NVLink domains were known have none.
  if (auto view = doc.find("nvlink_domains"); view != doc.end())
    if (Status agrees = CheckNvlinkDomainsView(*view, ComputeNvlinkDomains(t), file_name); !agrees.ok())
      return agrees.take_error();
  return t;
}

}  // namespace topolaunch
