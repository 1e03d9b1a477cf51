// The three renderings of an audit report: topolaunch.audit/1 JSON, the
// human report grouped by severity, and the one-line prolog (drain) reason.
//
// The prolog line ends up in `scontrol update ... reason="..."`, which a
// shell script passes along, so it keeps to characters no shell or Slurm
// parser treats specially and is cut to a length Slurm shows in `sinfo -R`.
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/audit_findings.h"
#include "core/hostlist.h"
#include "core/json_text.h"

namespace topolaunch {

namespace {

using nlohmann::ordered_json;

ordered_json FindingJson(const Finding& f) {
  ordered_json j;
  j["severity"] = SeverityName(f.severity);
  j["check"] = f.check;
  if (!f.host.empty()) j["host"] = f.host;
  if (f.switch_guid) j["switch_guid"] = FormatGuid(*f.switch_guid);
  if (!f.switch_name.empty()) j["switch_name"] = f.switch_name;
  if (f.port) j["port"] = *f.port;
  if (f.peer) {
    ordered_json p;
    p["kind"] = f.peer->kind;
    p["guid"] = FormatGuid(f.peer->guid);
    if (!f.peer->name.empty()) p["name"] = f.peer->name;
    if (!f.peer->device.empty()) p["device"] = f.peer->device;
    p["port"] = f.peer->port;
    j["peer"] = p;
  }
  j["message"] = f.message;
  j["reasons"] = f.reasons;
  return j;
}

std::string Location(const Finding& f) {
  std::string where = FindingLocation(f);
  if (where.empty()) where = f.host;
  return where;
}

// Keeps letters, digits and a few punctuation marks; anything else (quotes,
// '$', '`', newlines, non-ASCII) becomes a space, runs of spaces one space.
std::string SafeText(std::string_view text) {
  static constexpr std::string_view kAllowed = " .,:;/_=-()<>+";
  std::string out;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              kAllowed.find(c) != std::string_view::npos;
    char put = ok ? c : ' ';
    if (put == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(put);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void AppendFinding(const Finding& f, std::string& out) {
  out += fmt::format("  [{}] {}\n", f.check, f.message);
  std::string where = Location(f);
  if (!where.empty()) out += fmt::format("      at {}\n", where);
  for (const std::string& r : f.reasons) out += fmt::format("      - {}\n", r);
}

}  // namespace

std::string FormatAuditJson(const AuditReport& report) {
  ordered_json doc;
  doc["schema"] = kAuditSchema;
  doc["generated"] = {{"by", report.generated.by}, {"at", report.generated.at},
                      {"fabric_source", report.generated.fabric_source}};
  doc["checks_run"] = report.checks_run;
  ordered_json failed = ordered_json::array();
  for (const CheckFailure& c : report.checks_failed_to_run) failed.push_back({{"check", c.check}, {"reason", c.reason}});
  doc["checks_failed_to_run"] = failed;
  ordered_json findings = ordered_json::array();
  for (const Finding& f : report.findings) findings.push_back(FindingJson(f));
  doc["findings"] = findings;
  return DumpJsonText(doc, 2) + "\n";
}

std::string FormatAuditText(const AuditReport& report, bool verbose) {
  std::string out;
  for (Severity s : {Severity::kCritical, Severity::kError, Severity::kWarning, Severity::kInfo}) {
    std::vector<const Finding*> group;
    for (const Finding& f : report.findings)
      if (f.severity == s) group.push_back(&f);
    if (group.empty()) continue;
    out += fmt::format("{} ({}):\n", SeverityName(s), group.size());
    // Alike: one check, the same reasons; in the order each first appears.
    std::vector<std::vector<const Finding*>> alike;
    std::map<std::pair<std::string, std::vector<std::string>>, size_t> index;
    for (const Finding* f : group) {
      auto [at, fresh] = index.emplace(std::pair{f->check, f->reasons}, alike.size());
      if (fresh) alike.emplace_back();
      alike[at->second].push_back(f);
    }
    for (const std::vector<const Finding*>& same : alike) {
      if (verbose || same.size() <= kAlikeShownOneByOne) {
        for (const Finding* f : same) AppendFinding(*f, out);
        continue;
      }
      const Finding& first = *same.front();
      out += fmt::format("  [{}] {} alike, the first: {}\n", first.check, same.size(), first.message);
      std::vector<std::string> hosts;
      for (const Finding* f : same)
        if (!f->host.empty()) hosts.push_back(f->host);
      if (!hosts.empty()) out += fmt::format("      hosts: {}\n", HostListForMessages(hosts));
      for (const std::string& r : first.reasons) out += fmt::format("      - {}\n", r);
      out += fmt::format("      (--verbose lists all {})\n", same.size());
    }
  }
  if (!report.checks_failed_to_run.empty()) {
    out += fmt::format("could not check ({}):\n", report.checks_failed_to_run.size());
    for (const CheckFailure& c : report.checks_failed_to_run) out += fmt::format("  [{}] {}\n", c.check, c.reason);
  }
  std::map<Severity, int> counts;
  for (const Finding& f : report.findings) ++counts[f.severity];
  out += fmt::format("audit: {} checks run, {} could not run; {} critical, {} error, {} warning, {} info\n",
                     report.checks_run.size(), report.checks_failed_to_run.size(), counts[Severity::kCritical],
                     counts[Severity::kError], counts[Severity::kWarning], counts[Severity::kInfo]);
  return out;
}

std::string FormatAuditProlog(const AuditReport& report, size_t max_chars) {
  std::vector<std::string> parts;
  for (const CheckFailure& c : report.checks_failed_to_run) parts.push_back(SafeText("not checked " + c.check + ": " + c.reason));
  Severity worst = Severity::kInfo;
  int counted = 0;
  for (const Finding& f : report.findings) worst = std::max(worst, f.severity);
  for (const Finding& f : report.findings) {
    if (f.severity != worst || f.severity < Severity::kWarning) continue;
    ++counted;
    parts.push_back(SafeText(f.check + ": " + f.message));
  }
  std::string line;
  if (parts.empty()) {
    line = "ok";
  } else {
    line = "topolaunch audit:";
    if (counted > 0) line += fmt::format(" {} {}", counted, SeverityName(worst));
    for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? " " : "; ") + parts[i];
  }
  if (line.size() > max_chars) line = line.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return line;
}

}  // namespace topolaunch
