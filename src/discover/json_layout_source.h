// A host's layout from a JSON file: what `topolaunch discover --fabric none
// -o HOST.json` wrote on that host (a topology.json of one host), or a bare
// layout object. Unlike an hwloc XML export it keeps what only the live
// machine knew -- NVML's model names, NVLink peers and GPU fabric info -- so
// NVLink domains can be gathered from every node of a rack.
#pragma once

#include <string>

#include "topolaunch/sources.h"

namespace topolaunch {

class JsonLayoutSource : public HostLayoutSource {
 public:
  explicit JsonLayoutSource(std::string path) : path_(std::move(path)) {}
  /// Errors (kBadInput, naming the file and JSON path): not JSON, not a
  /// valid layout, or a topology.json that does not hold exactly one host
  /// with a layout; kUnavailable when the file cannot be read.
  Result<HostLayout> LoadLayout() override;

 private:
  std::string path_;
};

}  // namespace topolaunch
