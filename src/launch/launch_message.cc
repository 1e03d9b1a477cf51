#include "launch/launch_message.h"

#include <nlohmann/json.hpp>

#include "core/json_checker.h"
#include "core/json_text.h"

namespace topolaunch {

namespace {
constexpr const char* kBytesExpected = "expected a string or {\"hex\": \"...\"}";
}  // namespace

std::string FormatLaunchMessage(const LaunchMessage& message) {
  // Arguments, values and the folder are bytes that must arrive unchanged:
  // anything that is not UTF-8 travels as {"hex": ...} (core/json_text.h).
  nlohmann::json json;
  nlohmann::json argv = nlohmann::json::array();
  for (const std::string& arg : message.command.argv) argv.push_back(BytesToJson(arg));
  json["argv"] = argv;
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [name, value] : message.command.env) env[name] = BytesToJson(value);
  json["env"] = env;
  if (!message.command.cwd.empty()) json["cwd"] = BytesToJson(message.command.cwd);
  json["grace_ms"] = message.grace.count();
  if (message.heartbeat.count() > 0) json["heartbeat_ms"] = message.heartbeat.count();
  if (message.rank_output) json["rank_output"] = true;
  return DumpJsonText(json, -1) + "\n";
}

Result<LaunchMessage> ParseLaunchMessage(std::string_view text) {
  Result<nlohmann::json> json = ParseJsonText(text, "launch message");
  if (!json.ok()) return json.take_error();
  JsonChecker c("launch message");
  LaunchMessage message;
  if (!json->is_object()) {
    c.Report("$", "expected an object");
    return c.TakeError();
  }
  if (const nlohmann::json* argv = c.Array(*json, "$", "argv")) {
    if (argv->empty()) c.Report("$.argv", "empty: nothing to run");
    for (size_t i = 0; i < argv->size(); ++i) {
      if (std::optional<std::string> arg = BytesFromJson((*argv)[i])) message.command.argv.push_back(std::move(*arg));
      else c.Report(JsonIndex("$.argv", i), kBytesExpected);
    }
  }
  if (const nlohmann::json* env = c.Object(*json, "$", "env", false)) {
    for (const auto& [name, value] : env->items()) {
      std::string path = JsonPath("$.env", name);
      if (!IsValidEnvName(name)) c.Report(path, "not a variable name (expected [A-Za-z_][A-Za-z0-9_]*)");
      if (std::optional<std::string> bytes = BytesFromJson(value)) message.command.env.emplace_back(name, std::move(*bytes));
      else c.Report(path, kBytesExpected);
    }
  }
  if (const nlohmann::json* cwd = c.Member(*json, "$", "cwd", false)) {
    if (std::optional<std::string> bytes = BytesFromJson(*cwd)) message.command.cwd = std::move(*bytes);
    else c.Report("$.cwd", kBytesExpected);
  }
  if (auto grace = c.Integer(*json, "$", "grace_ms", 0, 3'600'000, false)) message.grace = std::chrono::milliseconds(*grace);
  if (auto heartbeat = c.Integer(*json, "$", "heartbeat_ms", 0, 3'600'000, false))
    message.heartbeat = std::chrono::milliseconds(*heartbeat);
  if (auto rank_output = c.Boolean(*json, "$", "rank_output", false)) message.rank_output = *rank_output;
  if (!c.ok()) return c.TakeError();
  return message;
}

}  // namespace topolaunch
