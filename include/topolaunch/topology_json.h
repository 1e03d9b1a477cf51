// topology.json (schema topolaunch.topology/1): writing and validated reading.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// The document as text: two-space indented, keys in schema order, ending in
/// a newline. Deterministic: the same Topology gives the same bytes.
std::string FormatTopologyJson(const Topology& topology);

/// The same bytes in pieces of about `piece_bytes` (the last one shorter),
/// each handed to `sink` as soon as it is written, so that writing the file
/// overlaps making the rest.
void WriteTopologyJson(const Topology& topology, size_t piece_bytes, const std::function<void(std::string)>& sink);

/// Reads and validates a topology.json document. Every problem is reported
/// at once, each named by `file_name` and its JSON path
/// ("topology.json: $.hosts[2].hcas[0].switch_guid"); kBadInput.
Result<Topology> ParseTopologyJson(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
