#include "support/nvlink_racks.h"

#include <fmt/format.h>

#include "discover/json_layout_source.h"
#include "support/test_paths.h"

namespace topolaunch::testing {

HostLayout TrayLayout(const std::string& file) {
  Result<HostLayout> layout = JsonLayoutSource(TestDataDir() + "/nvlink/" + file).LoadLayout();
  if (!layout.ok()) {
    fmt::print(stderr, "fixture {} does not read: {}\n", file, layout.error().Message());
    return {};
  }
  return std::move(layout).value();
}

std::string RackUuid(int rack) { return fmt::format("00000000-0000-4000-8000-{:012x}", rack); }

HostLayout InRack(HostLayout tray, int rack) {
  for (Gpu& g : tray.gpus) g.nvlink_fabric = GpuFabric{RackUuid(rack), 1, "completed", "ok", {}};
  return tray;
}

void PutInRacks(Topology& topology, const std::map<std::string, int>& racks) {
  HostLayout tray = TrayLayout();
  for (const auto& [host, rack] : racks) {
    HostLayout layout = InRack(tray, rack);
    layout.hostname = host;
    AttachLayout(topology, host, std::move(layout));
  }
}

}  // namespace topolaunch::testing
