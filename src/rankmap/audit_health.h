// Reading an audit report (schema topolaunch.audit/1) to learn which hosts
// should not be planned.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// Hosts an audit marks unhealthy, each with the reason. A host is
/// unhealthy when a finding of severity "error" or "critical" names it --
/// directly ("host"), or through the switch port its HCA is cabled to
/// ("switch_guid" + "port", resolved with `topology` when given). Unknown
/// keys are ignored, as later audit versions may add some. Errors (kBadInput,
/// every problem with its JSON path): not JSON, wrong schema, a finding
/// without severity/check/message, an unknown severity.
Result<std::map<std::string, std::string>> ReadUnhealthyHosts(std::string_view text, std::string_view file_name,
                                                             const Topology* topology);

}  // namespace topolaunch
