#include "discover/fabric_merge.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string Where(const std::vector<std::string>& names, size_t a, size_t b) {
  return fmt::format("{} and {}", names.at(a), names.at(b));
}

std::string Peer(const std::optional<PortRef>& remote) {
  return remote ? fmt::format("{} port {}", FormatGuid(remote->node_guid), remote->port) : "nothing";
}

}  // namespace

Result<Fabric> MergeFabrics(std::vector<Fabric> fabrics, const std::vector<std::string>& names) {
  if (fabrics.size() == 1) return std::move(fabrics.front());
  Fabric merged;
  std::map<Guid, std::pair<size_t, size_t>> seen;  // guid -> (node index in merged, fabric it came from)
  std::vector<Problem> problems;
  for (size_t f = 0; f < fabrics.size(); ++f) {
    Fabric& fabric = fabrics[f];
    if (merged.source.empty()) merged.source = fabric.source;
    for (std::string& note : fabric.notes) merged.notes.push_back(std::move(note));
    for (FabricNode& node : fabric.nodes) {
      auto [at, fresh] = seen.emplace(node.guid, std::pair{merged.nodes.size(), f});
      if (fresh) {
        merged.nodes.push_back(std::move(node));
        continue;
      }
      FabricNode& kept = merged.nodes[at->second.first];
      size_t first = at->second.second;
      if (kept.type != node.type) {
        problems.push_back({Where(names, first, f),
                            fmt::format("node {} is a {} in one and a {} in the other", FormatGuid(node.guid),
                                        NodeTypeName(kept.type), NodeTypeName(node.type))});
        continue;
      }
      for (FabricPort& port : node.ports) {
        auto same = std::find_if(kept.ports.begin(), kept.ports.end(),
                                 [&](const FabricPort& p) { return p.number == port.number; });
        if (same == kept.ports.end()) {
          kept.ports.push_back(std::move(port));
        } else if (same->remote != port.remote) {
          problems.push_back({Where(names, first, f),
                              fmt::format("port {} of {} is cabled to {} in one and to {} in the other", port.number,
                                          FormatGuid(node.guid), Peer(same->remote), Peer(port.remote))});
        }
      }
      std::sort(kept.ports.begin(), kept.ports.end(),
                [](const FabricPort& a, const FabricPort& b) { return a.number < b.number; });
      kept.num_ports = std::max(kept.num_ports, node.num_ports);
    }
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return merged;
}

}  // namespace topolaunch
