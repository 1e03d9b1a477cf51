// audit.json (topolaunch.audit/1) as `plan --audit` reads it.
#include "fuzz/fuzz_check.h"
#include "rankmap/audit_health.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto hosts = ReadUnhealthyHosts(fuzz::AsText(data, size), "fuzz.json", nullptr);
  if (!hosts.ok()) fuzz::Check(!hosts.error().problems.empty(), "an error names at least one problem");
  return 0;
}
