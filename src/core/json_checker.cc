#include "core/json_checker.h"

#include <fmt/format.h>

#include "core/json_fast_parse.h"

namespace topolaunch {

using nlohmann::json;

namespace {

std::string_view TypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "something else";
  }
}

}  // namespace

std::string JsonPath(const std::string& parent, std::string_view key) { return fmt::format("{}.{}", parent, key); }
std::string JsonIndex(const std::string& parent, size_t index) { return fmt::format("{}[{}]", parent, index); }

void JsonChecker::Report(const std::string& path, std::string what) {
  problems_.push_back({file_name_.empty() ? path : fmt::format("{}: {}", file_name_, path), std::move(what)});
}

const json* JsonChecker::Member(const json& object, const std::string& path, std::string_view key, bool required) {
  if (!object.is_object()) return nullptr;  // the caller reported the container
  auto it = object.find(key);
  if (it == object.end()) {
    if (required) Report(JsonPath(path, key), "required field is missing");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonChecker::String(const json& object, const std::string& path, std::string_view key,
                                               bool required) {
  const json* v = Member(object, path, key, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Report(JsonPath(path, key), fmt::format("expected a string, found {}", TypeName(*v)));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<long long> JsonChecker::Integer(const json& object, const std::string& path, std::string_view key,
                                              long long min, long long max, bool required) {
  const json* v = Member(object, path, key, required);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    Report(JsonPath(path, key), fmt::format("expected an integer, found {}", TypeName(*v)));
    return std::nullopt;
  }
  long long value = v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(max)
                        ? max + 1
                        : v->get<long long>();
  if (value < min || value > max) {
    Report(JsonPath(path, key), fmt::format("expected an integer from {} to {}, found {}", min, max, v->dump()));
    return std::nullopt;
  }
  return value;
}

std::optional<double> JsonChecker::Number(const json& object, const std::string& path, std::string_view key,
                                          bool required) {
  const json* v = Member(object, path, key, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    Report(JsonPath(path, key), fmt::format("expected a number, found {}", TypeName(*v)));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<bool> JsonChecker::Boolean(const json& object, const std::string& path, std::string_view key,
                                         bool required) {
  const json* v = Member(object, path, key, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    Report(JsonPath(path, key), fmt::format("expected true or false, found {}", TypeName(*v)));
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<Guid> JsonChecker::GuidString(const json& object, const std::string& path, std::string_view key,
                                            bool required) {
  std::optional<std::string> text = String(object, path, key, required);
  if (!text) return std::nullopt;
  std::optional<Guid> guid = text->size() == 18 && text->starts_with("0x") ? ParseGuid(*text) : std::nullopt;
  if (!guid || FormatGuid(*guid) != *text) {
    Report(JsonPath(path, key),
           fmt::format("expected a GUID as lowercase 0x + 16 hex digits (0x0002c90300a1b2c3), found \"{}\"", *text));
    return std::nullopt;
  }
  return guid;
}

const json* JsonChecker::Array(const json& object, const std::string& path, std::string_view key, bool required) {
  const json* v = Member(object, path, key, required);
  if (v && !v->is_array()) {
    Report(JsonPath(path, key), fmt::format("expected an array, found {}", TypeName(*v)));
    return nullptr;
  }
  return v;
}

const json* JsonChecker::Object(const json& object, const std::string& path, std::string_view key, bool required) {
  const json* v = Member(object, path, key, required);
  if (v && !v->is_object()) {
    Report(JsonPath(path, key), fmt::format("expected an object, found {}", TypeName(*v)));
    return nullptr;
  }
  return v;
}

std::vector<std::string> JsonChecker::StringArray(const json& object, const std::string& path, std::string_view key,
                                                  bool required) {
  std::vector<std::string> out;
  const json* array = Array(object, path, key, required);
  if (!array) return out;
  for (size_t i = 0; i < array->size(); ++i) {
    if ((*array)[i].is_string()) out.push_back((*array)[i].get<std::string>());
    else Report(JsonIndex(JsonPath(path, key), i), fmt::format("expected a string, found {}", TypeName((*array)[i])));
  }
  return out;
}

Result<json> ParseJsonText(std::string_view text, std::string_view file_name) {
  if (std::optional<json> fast = FastParseJson(text)) return std::move(*fast);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    size_t offset = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, column 2: ".
    if (size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    return Error(ErrorCode::kBadInput, fmt::format("{}:{}:{}", file_name, line, column),
                 "not valid JSON: " + what);
  } catch (const json::exception& e) {
    // A number too large for a double ("1e99999"): out_of_range.406, thrown
    // by the parser without a position.
    std::string what = e.what();
    if (size_t bracket = what.find("] "); what.starts_with("[json.exception.") && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    if (what.size() > 120) what = what.substr(0, 117) + "...";
    return Error(ErrorCode::kBadInput, std::string(file_name), "not valid JSON: " + what);
  }
}

}  // namespace topolaunch
