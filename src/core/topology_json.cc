// topology.json: the model <-> JSON, with every reading problem reported.
//
// Writing goes straight to text (json_writer.h), keys in the order SPEC.md
// shows them, which keeps diffs of two discoveries readable; it is byte for
// byte what nlohmann's dump(2) writes for the same document, without the
// DOM, which at 4,096 hosts took longer than everything after the fabric
// walk together. Reading goes
// through JsonChecker, so a hand-edited file with five mistakes gets five
// messages, each with its JSON path.
#include "topolaunch/topology_json.h"

#include <fmt/format.h>

#include "core/json_checker.h"
#include "core/json_text.h"
#include "core/json_writer.h"
#include "core/layout_json.h"
#include "core/nvlink_domains.h"

namespace topolaunch {

using nlohmann::json;

namespace {

constexpr int kIndent = 2;

void WritePortRef(JsonWriter& w, const PortRef& ref) {
  w.BeginObject();
  w.Key("guid").String(GuidText(ref.node_guid));
  w.Key("port").Int(ref.port);
  w.EndObject();
}

void WriteHca(JsonWriter& w, const HcaAttachment& a) {
  w.BeginObject();
  w.Key("guid").String(GuidText(a.guid));
  if (a.port_guid) w.Key("port_guid").String(GuidText(a.port_guid));
  w.Key("description").String(a.description);
  if (!a.device.empty()) w.Key("device").String(a.device);
  w.Key("port").Int(a.port);
  w.Key("switch_guid");
  if (a.switch_guid) w.String(GuidText(*a.switch_guid));
  else w.Null();
  w.Key("switch_port").IntOrNull(a.switch_port);
  w.Key("width").String(a.width);
  w.Key("speed").String(a.speed);
  w.Key("rate_gbps");
  if (a.rate_gbps) w.Number(*a.rate_gbps);
  else w.Null();
  w.EndObject();
}

void WriteHost(JsonWriter& w, const TopologyHost& h) {
  w.BeginObject();
  w.Key("name").String(h.name);
  w.Key("hcas").BeginArray();
  for (const HcaAttachment& a : h.hcas) WriteHca(w, a);
  w.EndArray();
  // LayoutToJson's keys come out sorted, as they always have.
  if (h.layout) w.Key("layout").Dumped(DumpJsonText(LayoutToJson(*h.layout), kIndent));
  w.EndObject();
}

void WriteLink(JsonWriter& w, const TopologyLink& l) {
  w.BeginObject();
  w.Key("from");
  WritePortRef(w, l.from);
  w.Key("to");
  WritePortRef(w, l.to);
  w.Key("width").String(l.width);
  w.Key("speed").String(l.speed);
  w.Key("state").StringOrNull(l.state);
  w.EndObject();
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

// The whole document but its final newline.
void WriteDocument(JsonWriter& w, const Topology& t) {
  w.BeginObject();
  w.Key("schema").String(kTopologySchema);
  w.Key("generated").BeginObject();
  w.Key("by").String(t.generated.by);
  w.Key("at").String(t.generated.at);
  w.Key("fabric_source").String(t.generated.fabric_source);
  w.EndObject();
  w.Key("switches").BeginArray();
  for (const TopologySwitch& s : t.switches) {
    w.BeginObject();
    w.Key("guid").String(GuidText(s.guid));
    w.Key("name").String(s.name);
    w.Key("level").Int(s.level);
    w.Key("ports").Int(s.ports);
    w.EndObject();
  }
  w.EndArray();
  w.Key("hosts").BeginArray();
  for (const TopologyHost& h : t.hosts) WriteHost(w, h);
  w.EndArray();
  w.Key("links").BeginArray();
  for (const TopologyLink& l : t.links) WriteLink(w, l);
  w.EndArray();
  w.Key("unmapped").BeginArray();
  for (const UnmappedCa& u : t.unmapped) {
    w.BeginObject();
    w.Key("guid").String(GuidText(u.guid));
    w.Key("description").String(u.description);
    w.Key("reason").String(u.reason);
    w.EndObject();
  }
  w.EndArray();
  // A view of the layouts (nvlink_domains.h), written for people and
  // scripts; readers recompute it and check that the two agree.
  w.Key("nvlink_domains").Dumped(DumpJsonText(NvlinkDomainsToJson(ComputeNvlinkDomains(t)), kIndent));
  w.EndObject();
}

}  // namespace

std::string FormatTopologyJson(const Topology& t) {
  JsonWriter w(kIndent);
  w.Reserve(4096 + 900 * t.hosts.size() + 250 * t.links.size());
  WriteDocument(w, t);
  std::string text = w.Take();
  text += '\n';
  return text;
}

void WriteTopologyJson(const Topology& t, size_t piece_bytes, const std::function<void(std::string)>& sink) {
  JsonWriter w(kIndent);
  w.Reserve(piece_bytes + piece_bytes / 4);
  w.DrainEvery(piece_bytes, sink);
  WriteDocument(w, t);
  std::string rest = w.Take();
  rest += '\n';
  sink(std::move(rest));
}

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
