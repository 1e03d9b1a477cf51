// JSON text that is always valid UTF-8, whatever bytes the strings hold.
//
// Node descriptions are free-form 64-byte fields, hwloc names come from
// firmware, paths and arguments are bytes: none of them is promised to be
// UTF-8, and nlohmann's default `dump` throws (type_error.316) on the first
// byte that is not. Two policies, chosen by what the text is for:
//
// - Documents for people and other tools (topology.json, plan.json,
//   audit.json, env JSON, the preflight reply): each byte that is not part of
//   a valid UTF-8 sequence becomes U+FFFD (the replacement character), as
//   Unicode recommends. The document stays readable and parseable; the bad
//   bytes are not recoverable from it.
// - Values that must arrive byte for byte (a job's arguments, environment
//   and folder in the launch message): a valid UTF-8 string is written as a
//   JSON string, anything else as {"hex": "<two hex digits per byte>"}.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace topolaunch {

/// Whether `text` is well-formed UTF-8 (no overlongs, no surrogates, nothing
/// past U+10FFFF).
bool IsValidUtf8(std::string_view text);

/// `text` with every byte that does not belong to a valid UTF-8 sequence
/// replaced by U+FFFD.
std::string ToValidUtf8(std::string_view text);

/// Serializes a document (nlohmann::json or ordered_json) with the
/// replacement policy: never throws on bad bytes. `indent` < 0 = one line.
template <class Json>
std::string DumpJsonText(const Json& doc, int indent) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// A byte string as JSON: a string when it is valid UTF-8, else {"hex": ...}.
nlohmann::json BytesToJson(std::string_view bytes);

/// The inverse of BytesToJson; nullopt when `value` is neither form (or the
/// hex is malformed).
std::optional<std::string> BytesFromJson(const nlohmann::json& value);

}  // namespace topolaunch
