#include "discover/json_layout_source.h"

#include <fmt/format.h>

#include "core/json_checker.h"
#include "core/layout_json.h"
#include "core/text_io.h"
#include "topolaunch/topology_json.h"

namespace topolaunch {

Result<HostLayout> JsonLayoutSource::LoadLayout() {
  Result<std::string> text = ReadTextFile(path_);
  if (!text.ok()) return text.take_error();
  Result<nlohmann::json> doc = ParseJsonText(*text, path_);
  if (!doc.ok()) return doc.take_error();
  if (doc->is_object() && doc->contains("schema")) {
    Result<Topology> topology = ParseTopologyJson(*text, path_);
    if (!topology.ok()) return topology.take_error();
    std::vector<const TopologyHost*> with_layout;
    for (const TopologyHost& h : topology->hosts)
      if (h.layout) with_layout.push_back(&h);
    if (with_layout.size() != 1)
      return Error(ErrorCode::kBadInput, path_ + ": $.hosts",
                   fmt::format("{} host(s) with a layout; a per-host file holds one (write it on the host with "
                               "`topolaunch discover --fabric none -o HOST.json`)",
                               with_layout.size()));
    return *with_layout.front()->layout;
  }
  Result<HostLayout> layout = LayoutFromJson(*doc, "$");
  if (!layout.ok()) {
    Error e = layout.take_error();
    for (Problem& p : e.problems) p.where = path_ + ": " + p.where;
    return e;
  }
  return layout;
}

}  // namespace topolaunch
