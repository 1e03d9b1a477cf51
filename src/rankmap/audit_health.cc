#include "rankmap/audit_health.h"

#include <fmt/format.h>

#include "core/json_checker.h"

namespace topolaunch {

namespace {

struct Finding {
  std::string severity, check, message;
  std::optional<std::string> host;
  std::optional<Guid> switch_guid;
  std::optional<long long> port;
};

std::optional<Finding> ReadFinding(JsonChecker& checker, const nlohmann::json& item, const std::string& path) {
  if (!item.is_object()) {
    checker.Report(path, "expected an object");
    return std::nullopt;
  }
  Finding f;
  auto severity = checker.String(item, path, "severity");
  auto check = checker.String(item, path, "check");
  auto message = checker.String(item, path, "message");
  // Optional fields may be absent or null.
  auto given = [&](const char* key) { return item.contains(key) && !item[key].is_null(); };
  if (given("host")) f.host = checker.String(item, path, "host");
  if (given("switch_guid")) f.switch_guid = checker.GuidString(item, path, "switch_guid");
  if (given("port")) f.port = checker.Integer(item, path, "port", 0, 255);
  if (severity && *severity != "critical" && *severity != "error" && *severity != "warning" && *severity != "info")
    checker.Report(JsonPath(path, "severity"),
                   fmt::format("\"{}\": expected \"critical\", \"error\", \"warning\" or \"info\"", *severity));
  if (!severity || !check || !message) return std::nullopt;
  f.severity = *severity, f.check = *check, f.message = *message;
  return f;
}

// The host whose HCA is cabled to `switch_guid` port `port`, if any.
std::optional<std::string> HostOnPort(const Topology* topology, Guid switch_guid, long long port) {
  if (!topology) return std::nullopt;
  for (const TopologyHost& host : topology->hosts)
    for (const HcaAttachment& hca : host.hcas)
      if (hca.switch_guid == switch_guid && hca.switch_port == port) return host.name;
  return std::nullopt;
}

}  // namespace

Result<std::map<std::string, std::string>> ReadUnhealthyHosts(std::string_view text, std::string_view file_name,
                                                             const Topology* topology) {
  Result<nlohmann::json> doc = ParseJsonText(text, file_name);
  if (!doc.ok()) return doc.take_error();
  JsonChecker checker{std::string(file_name)};
  if (!doc->is_object()) {
    checker.Report("$", "expected a JSON object (a topolaunch audit --json report)");
    return checker.TakeError();
  }
  std::optional<std::string> schema = checker.String(*doc, "$", "schema");
  if (schema && *schema != "topolaunch.audit/1")
    checker.Report("$.schema", fmt::format("\"{}\": expected \"topolaunch.audit/1\"", *schema));
  const nlohmann::json* findings = checker.Array(*doc, "$", "findings");
  std::map<std::string, std::string> unhealthy;
  for (size_t i = 0; findings && i < findings->size(); ++i) {
    std::optional<Finding> f = ReadFinding(checker, (*findings)[i], JsonIndex("$.findings", i));
    if (!f || (f->severity != "error" && f->severity != "critical")) continue;
    std::optional<std::string> host = f->host;
    if (!host && f->switch_guid && f->port) host = HostOnPort(topology, *f->switch_guid, *f->port);
    if (!host) continue;
    std::string reason = fmt::format("audit {} {}: {}", f->severity, f->check, f->message);
    auto [it, fresh] = unhealthy.emplace(*host, reason);
    if (!fresh && it->second.find(" (and more)") == std::string::npos) it->second += " (and more)";
  }
  if (!checker.ok()) return checker.TakeError();
  return unhealthy;
}

}  // namespace topolaunch
