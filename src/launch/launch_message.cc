#include "launch/launch_message.h"

#include <nlohmann/json.hpp>

#include "core/json_checker.h"

namespace topolaunch {

std::string FormatLaunchMessage(const LaunchMessage& message) {
  nlohmann::json json;
  json["argv"] = message.command.argv;
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [name, value] : message.command.env) env[name] = value;
  json["env"] = env;
  if (!message.command.cwd.empty()) json["cwd"] = message.command.cwd;
  json["grace_ms"] = message.grace.count();
  if (message.heartbeat.count() > 0) json["heartbeat_ms"] = message.heartbeat.count();
  // Invalid UTF-8 in an argument is passed through unchanged (as bytes).
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::ignore) + "\n";
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
  message.command.argv = c.StringArray(*json, "$", "argv");
  if (json->contains("argv") && (*json)["argv"].is_array() && (*json)["argv"].empty())
    c.Report("$.argv", "empty: nothing to run");
  if (const nlohmann::json* env = c.Object(*json, "$", "env", false)) {
    for (const auto& [name, value] : env->items()) {
      std::string path = JsonPath("$.env", name);
      if (!IsValidEnvName(name)) c.Report(path, "not a variable name (expected [A-Za-z_][A-Za-z0-9_]*)");
      if (!value.is_string()) c.Report(path, "expected a string");
      else message.command.env.emplace_back(name, value.get<std::string>());
    }
  }
  message.command.cwd = c.String(*json, "$", "cwd", false).value_or("");
  if (auto grace = c.Integer(*json, "$", "grace_ms", 0, 3'600'000, false)) message.grace = std::chrono::milliseconds(*grace);
  if (auto heartbeat = c.Integer(*json, "$", "heartbeat_ms", 0, 3'600'000, false))
    message.heartbeat = std::chrono::milliseconds(*heartbeat);
  if (!c.ok()) return c.TakeError();
  return message;
}

}  // namespace topolaunch
