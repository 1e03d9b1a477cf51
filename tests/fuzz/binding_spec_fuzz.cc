// TOPOLAUNCH_BINDINGS reaches `topolaunch bind` through the environment of
// every worker.
#include "fuzz/fuzz_check.h"
#include "launch/binding_spec.h"
#include "launch/binding_within_cgroup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  auto entries = ParseBindingSpec(fuzz::AsText(data, size));
  if (!entries.ok()) {
    fuzz::Check(!entries.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  for (int rank = 0; rank < 3; ++rank) (void)BoundCommand(*entries, rank, {"python3", "train.py"}, "/usr/bin/numactl");
  // The same input read as /proc/self/status: narrowing never adds a CPU.
  AllowedPlaces allowed = ParseAllowedPlaces(fuzz::AsText(data, size));
  NarrowedBindings narrowed = WithinAllowed(*entries, allowed);
  fuzz::Check(narrowed.entries.size() == entries->size(), "one entry a local rank");
  for (size_t i = 0; i < entries->size(); ++i)
    fuzz::Check(narrowed.entries[i].cpus.size() <= (*entries)[i].cpus.size(), "narrowing never adds a CPU");
  return 0;
}
