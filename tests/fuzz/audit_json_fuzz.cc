// audit.json (topolaunch.audit/1) as `plan --audit` and `show --audit` read
// it: an accepted report writes back and reads back the same.
#include "audit/audit_json_read.h"
#include "fuzz/fuzz_check.h"
#include "rankmap/audit_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  auto hosts = ReadUnhealthyHosts(text, "fuzz.json", nullptr);
  if (!hosts.ok()) fuzz::Check(!hosts.error().problems.empty(), "an error names at least one problem");
  Result<AuditReport> report = ParseAuditJson(text, "fuzz.json");
  if (!report.ok()) return 0;
  std::string once = FormatAuditJson(*report);
  Result<AuditReport> back = ParseAuditJson(once, "fuzz-again.json");
  fuzz::Check(back.ok() && *back == *report, "what was accepted writes back and reads back the same");
  return 0;
}
