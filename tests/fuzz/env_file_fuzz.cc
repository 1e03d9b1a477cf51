// `run --env-file` dotenv files.
#include "fuzz/fuzz_check.h"
#include "launch/job_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto env = ParseEnvFile(fuzz::AsText(data, size), "fuzz.env");
  if (!env.ok()) fuzz::Check(!env.error().problems.empty(), "an error names at least one problem");
  return 0;
}
