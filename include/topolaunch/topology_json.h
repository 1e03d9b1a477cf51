// topology.json (schema topolaunch.topology/1): writing and validated reading.
#pragma once

#include <string>
#include <string_view>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// The document as text: two-space indented, keys in schema order, ending in
/// a newline. Deterministic: the same Topology gives the same bytes.
std::string FormatTopologyJson(const Topology& topology);

/// Reads and validates a topology.json document. Every problem is reported
/// at once, each named by `file_name` and its JSON path
/// ("topology.json: $.hosts[2].hcas[0].switch_guid"); kBadInput.
Result<Topology> ParseTopologyJson(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
