// Reading JSON documents field by field while collecting every problem.
//
// A reader walks the document with these accessors; each one that finds a
// missing or mistyped field records a Problem named by its JSON path
// ("$.hosts[3].hcas[0].port") and returns nullopt, so one pass reports
// everything wrong with a file instead of stopping at the first mistake.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "topolaunch/fabric.h"
#include "topolaunch/result.h"

namespace topolaunch {

class JsonChecker {
 public:
  /// `file_name` prefixes every problem's location ("topology.json: $.x");
  /// when empty, locations are bare JSON paths.
  explicit JsonChecker(std::string file_name) : file_name_(std::move(file_name)) {}

  /// Records a problem at `path`.
  void Report(const std::string& path, std::string what);

  /// The member `key` of `object` (which must be an object). Missing and
  /// `required` → a problem. Returns nullptr when absent.
  const nlohmann::json* Member(const nlohmann::json& object, const std::string& path, std::string_view key,
                               bool required = true);

  std::optional<std::string> String(const nlohmann::json& object, const std::string& path, std::string_view key,
                                    bool required = true);
  std::optional<long long> Integer(const nlohmann::json& object, const std::string& path, std::string_view key,
                                   long long min, long long max, bool required = true);
  std::optional<double> Number(const nlohmann::json& object, const std::string& path, std::string_view key,
                               bool required = true);
  std::optional<bool> Boolean(const nlohmann::json& object, const std::string& path, std::string_view key,
                              bool required = true);
  /// A GUID in topology.json's form: lowercase "0x" + 16 hex digits.
  std::optional<Guid> GuidString(const nlohmann::json& object, const std::string& path, std::string_view key,
                                 bool required = true);
  /// The member as an array (nullptr + problem if it is something else).
  const nlohmann::json* Array(const nlohmann::json& object, const std::string& path, std::string_view key,
                              bool required = true);
  /// The member as an object (nullptr + problem if it is something else).
  const nlohmann::json* Object(const nlohmann::json& object, const std::string& path, std::string_view key,
                               bool required = true);
  /// Strings of an array member; bad items are reported and skipped.
  std::vector<std::string> StringArray(const nlohmann::json& object, const std::string& path,
                                       std::string_view key, bool required = true);

  bool ok() const { return problems_.empty(); }
  /// All problems as one kBadInput error.
  Error TakeError() { return Error(ErrorCode::kBadInput, std::move(problems_)); }

 private:
  std::string file_name_;
  std::vector<Problem> problems_;
};

/// "$.a" + "b" -> "$.a.b"; Index("$.a", 3) -> "$.a[3]".
std::string JsonPath(const std::string& parent, std::string_view key);
std::string JsonIndex(const std::string& parent, size_t index);

/// Parses JSON text; a syntax error is kBadInput naming `file_name:line:column`.
Result<nlohmann::json> ParseJsonText(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
