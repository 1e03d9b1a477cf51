// A fast path for reading JSON into nlohmann's model. nlohmann's own parser
// reads a byte at a time with position tracking and spends most of `plan`'s
// time on a 12,500-host topology.json; this one builds the same nlohmann
// value straight from the text. It accepts only what it is sure nlohmann
// reads the same way (RFC 8259 JSON, well-formed UTF-8, integers of up to 18
// digits, finite numbers, nesting up to kMaxDepth) and returns nullopt for
// anything else: ParseJsonText (json_checker.h) then parses with nlohmann,
// which either reads it or names the error as it always has.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace topolaunch {

inline constexpr int kFastJsonMaxDepth = 256;

/// The document `text` holds, exactly as nlohmann::json::parse gives it
/// (same values, same number types, later duplicate keys winning), or
/// nullopt when this parser is not sure (invalid JSON among it).
std::optional<nlohmann::json> FastParseJson(std::string_view text);

}  // namespace topolaunch
