// plan.json (topolaunch.plan/1) handed between plan and other launchers.
#include "fuzz/fuzz_check.h"
#include "rankmap/plan_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<Plan> plan = ParsePlanJson(fuzz::AsText(data, size), "fuzz.json");
  if (!plan.ok()) {
    fuzz::Check(!plan.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  std::string once = FormatPlanJson(*plan);
  Result<Plan> back = ParsePlanJson(once, "fuzz-again.json");
  fuzz::Check(back.ok(), "what was accepted writes back readable");
  if (back.ok()) fuzz::Check(FormatPlanJson(*back) == once, "the second write equals the first");
  return 0;
}
