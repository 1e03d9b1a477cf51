// Host files (`host slots=N`, DeepSpeed/MPI shape) given to plan and run.
#include "core/hostfile.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto entries = ParseHostfile(fuzz::AsText(data, size), "fuzz.hosts");
  if (!entries.ok()) fuzz::Check(!entries.error().problems.empty(), "an error names at least one problem");
  return 0;
}
