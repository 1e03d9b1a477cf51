#include "discover/assemble_topology.h"

#include <fmt/format.h>

namespace topolaunch {

Result<Topology> AssembleTopology(FabricSource* fabric, const NodeNameMap& name_map,
                                  const std::vector<LayoutInput>& layouts, Generated generated) {
  Topology topology;
  if (fabric) {
    Result<Fabric> loaded = fabric->LoadFabric();
    if (!loaded.ok()) return loaded.take_error();
    generated.fabric_source = loaded->source;
    topology = BuildTopology(*loaded, name_map, std::move(generated));
  } else {
    generated.fabric_source = "none";
    topology.generated = std::move(generated);
  }
  for (const LayoutInput& input : layouts) {
    Result<HostLayout> layout = input.source->LoadLayout();
    if (!layout.ok()) return layout.take_error();
    std::string host = !input.host.empty() ? input.host : !layout->hostname.empty() ? layout->hostname : input.fallback_host;
    // hwloc reports the kernel's node name, often fully qualified
    // ("jwb0004.juwels"), while CA descriptions and Slurm use the short
    // name: keep the full name only when the fabric knows the host by it.
    if (input.host.empty() && !topology.FindHost(host)) host = host.substr(0, host.find('.'));
    if (!IsValidHostName(host))
      return Error(ErrorCode::kBadInput, input.fallback_host,
                   fmt::format("cannot tell which host this layout belongs to (\"{}\" is not a host name)", host));
    AttachLayout(topology, host, std::move(layout).value());
  }
  return topology;
}

}  // namespace topolaunch
