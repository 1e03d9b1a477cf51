// infiniband-diags' error_thresholds files (`Name=value` lines), site-edited.
#include "audit/audit_counters.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<CounterThresholds> t =
      ParseCounterThresholds(fuzz::AsText(data, size), "fuzz.thresholds", DefaultCounterThresholds());
  if (!t.ok()) fuzz::Check(!t.error().problems.empty(), "an error names at least one problem");
  return 0;
}
