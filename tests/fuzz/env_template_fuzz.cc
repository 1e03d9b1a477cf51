// `env` profile templates (`NAME=VALUE  # reason`, `NAME=@rule`), site-edited.
#include "env/env_templates.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto lines = ParseEnvTemplate(fuzz::AsText(data, size), "fuzz.env");
  if (!lines.ok()) fuzz::Check(!lines.error().problems.empty(), "an error names at least one problem");
  return 0;
}
