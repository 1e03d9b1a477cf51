// Slurm host lists typed by people (`--hosts`, SLURM_JOB_NODELIST): the
// expansion is bounded, and compressing what it gave expands to the same.
#include "core/hostlist.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<std::vector<std::string>> hosts = ExpandHostList(fuzz::AsText(data, size));
  if (!hosts.ok()) {
    fuzz::Check(!hosts.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  std::string compressed = CompressHostList(*hosts);
  Result<std::vector<std::string>> again = ExpandHostList(compressed);
  fuzz::Check(again.ok(), "the compressed list expands");
  if (again.ok()) fuzz::Check(*again == *hosts, "expand(compress(hosts)) == hosts");
  return 0;
}
