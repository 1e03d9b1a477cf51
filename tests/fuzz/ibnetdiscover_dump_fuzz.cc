// ibnetdiscover dumps are pasted from terminals and cut short: the parser
// and everything after it (topology, topology.json) must hold.
#include "discover/ibnetdiscover_parser.h"
#include "fuzz/fuzz_check.h"
#include "topolaunch/topology.h"
#include "topolaunch/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<Fabric> fabric = ParseIbnetdiscover(fuzz::AsText(data, size), "fuzz.ibnet");
  if (!fabric.ok()) {
    fuzz::Check(!fabric.error().problems.empty(), "an error names at least one problem");
    return 0;
  }
  Topology topology = BuildTopology(*fabric, NodeNameMap{}, {});
  std::string json = FormatTopologyJson(topology);
  Result<Topology> back = ParseTopologyJson(json, "fuzz.json");
  fuzz::Check(back.ok(), "the topology.json we write reads back");
  if (back.ok()) fuzz::Check(FormatTopologyJson(*back) == json, "topology.json round trip is exact");
  return 0;
}
