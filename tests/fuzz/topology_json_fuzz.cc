// topology.json is copied between machines and edited by hand; what the
// validating reader accepts must write back and read back the same.
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "fuzz/fuzz_check.h"
#include "topolaunch/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<Topology> topology = ParseTopologyJson(fuzz::AsText(data, size), "fuzz.json");
  if (!topology.ok()) {
    fuzz::Check(!topology.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  std::string once = FormatTopologyJson(*topology);
  fuzz::Check(DumpJsonText(nlohmann::ordered_json::parse(once), 2) + "\n" == once,
              "the writer writes nlohmann's own form of its document");
  Result<Topology> back = ParseTopologyJson(once, "fuzz-again.json");
  fuzz::Check(back.ok(), "what was accepted writes back readable");
  if (back.ok()) fuzz::Check(FormatTopologyJson(*back) == once, "the second write equals the first");
  return 0;
}
