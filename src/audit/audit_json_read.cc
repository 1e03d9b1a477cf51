#include "audit/audit_json_read.h"

#include <fmt/format.h>

#include "core/json_checker.h"

namespace topolaunch {

namespace {

// Optional members may be absent or null.
bool Given(const nlohmann::json& object, const char* key) {
  return object.contains(key) && !object[key].is_null();
}

std::optional<FindingPeer> ReadPeer(JsonChecker& checker, const nlohmann::json& item, const std::string& path) {
  const nlohmann::json* peer = checker.Object(item, path, "peer");
  if (!peer) return std::nullopt;
  std::string at = JsonPath(path, "peer");
  FindingPeer p;
  auto kind = checker.String(*peer, at, "kind");
  auto guid = checker.GuidString(*peer, at, "guid");
  auto port = checker.Integer(*peer, at, "port", 0, 255, false);
  if (Given(*peer, "name")) p.name = checker.String(*peer, at, "name").value_or("");
  if (Given(*peer, "device")) p.device = checker.String(*peer, at, "device").value_or("");
  if (!kind || !guid) return std::nullopt;
  p.kind = *kind, p.guid = *guid, p.port = static_cast<int>(port.value_or(0));
  return p;
}

std::optional<Finding> ReadFinding(JsonChecker& checker, const nlohmann::json& item, const std::string& path) {
  if (!item.is_object()) {
    checker.Report(path, "expected an object");
    return std::nullopt;
  }
  Finding f;
  auto severity_name = checker.String(item, path, "severity");
  auto check = checker.String(item, path, "check");
  auto message = checker.String(item, path, "message");
  if (Given(item, "host")) f.host = checker.String(item, path, "host").value_or("");
  if (Given(item, "switch_guid")) f.switch_guid = checker.GuidString(item, path, "switch_guid");
  if (Given(item, "switch_name")) f.switch_name = checker.String(item, path, "switch_name").value_or("");
  if (Given(item, "port")) {
    auto port = checker.Integer(item, path, "port", 0, 255);
    if (port) f.port = static_cast<int>(*port);
  }
  if (Given(item, "peer")) f.peer = ReadPeer(checker, item, path);
  if (Given(item, "reasons")) f.reasons = checker.StringArray(item, path, "reasons");
  std::optional<Severity> severity = severity_name ? ParseSeverity(*severity_name) : std::nullopt;
  if (severity_name && !severity)
    checker.Report(JsonPath(path, "severity"),
                   fmt::format("\"{}\": expected \"critical\", \"error\", \"warning\" or \"info\"", *severity_name));
  if (!severity || !check || !message) return std::nullopt;
  f.severity = *severity, f.check = *check, f.message = *message;
  return f;
}

void ReadPreamble(JsonChecker& checker, const nlohmann::json& doc, AuditReport& report) {
  if (Given(doc, "generated")) {
    if (const nlohmann::json* g = checker.Object(doc, "$", "generated")) {
      report.generated.by = checker.String(*g, "$.generated", "by", false).value_or("");
      report.generated.at = checker.String(*g, "$.generated", "at", false).value_or("");
      report.generated.fabric_source = checker.String(*g, "$.generated", "fabric_source", false).value_or("");
    }
  }
  if (Given(doc, "checks_run")) report.checks_run = checker.StringArray(doc, "$", "checks_run");
  if (!Given(doc, "checks_failed_to_run")) return;
  const nlohmann::json* failed = checker.Array(doc, "$", "checks_failed_to_run");
  for (size_t i = 0; failed && i < failed->size(); ++i) {
    std::string at = JsonIndex("$.checks_failed_to_run", i);
    const nlohmann::json& item = (*failed)[i];
    if (!item.is_object()) {
      checker.Report(at, "expected an object");
      continue;
    }
    auto check = checker.String(item, at, "check");
    auto reason = checker.String(item, at, "reason");
    if (check && reason) report.checks_failed_to_run.push_back({*check, *reason});
  }
}

}  // namespace

Result<AuditReport> ParseAuditJson(std::string_view text, std::string_view file_name) {
  Result<nlohmann::json> doc = ParseJsonText(text, file_name);
  if (!doc.ok()) return doc.take_error();
  JsonChecker checker{std::string(file_name)};
  if (!doc->is_object()) {
    checker.Report("$", "expected a JSON object (a topolaunch audit --json report)");
    return checker.TakeError();
  }
  std::optional<std::string> schema = checker.String(*doc, "$", "schema");
  if (schema && *schema != kAuditSchema)
    checker.Report("$.schema", fmt::format("\"{}\": expected \"{}\"", *schema, kAuditSchema));
  AuditReport report;
  ReadPreamble(checker, *doc, report);
  const nlohmann::json* findings = checker.Array(*doc, "$", "findings");
  for (size_t i = 0; findings && i < findings->size(); ++i)
    if (std::optional<Finding> f = ReadFinding(checker, (*findings)[i], JsonIndex("$.findings", i)))
      report.findings.push_back(std::move(*f));
  if (!checker.ok()) return checker.TakeError();
  return report;
}

}  // namespace topolaunch
