// node-name-map files are written by admins by hand (GUID "name" lines).
#include "fuzz/fuzz_check.h"
#include "topolaunch/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<NodeNameMap> map = ParseNodeNameMap(fuzz::AsText(data, size), "fuzz.map");
  if (!map.ok()) fuzz::Check(!map.error().problems.empty(), "an error names at least one problem");
  return 0;
}
