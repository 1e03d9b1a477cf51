// TOPOLAUNCH_BINDINGS reaches `topolaunch bind` through the environment of
// every worker.
#include "fuzz/fuzz_check.h"
#include "launch/binding_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto entries = ParseBindingSpec(fuzz::AsText(data, size));
  if (!entries.ok()) {
    fuzz::Check(!entries.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  for (int rank = 0; rank < 3; ++rank) (void)BoundCommand(*entries, rank, {"python3", "train.py"}, "/usr/bin/numactl");
  return 0;
}
