#include "env/env_format.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/shell_quote.h"

namespace topolaunch {

namespace {

std::string ExplainComment(const EnvVariable& variable) {
  return fmt::format("# {}: {} [{}, {}]\n", variable.name, variable.reason, EnvSourceName(variable.source), variable.origin);
}

std::string UnsetComments(const EnvOutcome& env) {
  std::string out;
  for (const EnvLeftUnset& unset : env.unset) out += fmt::format("# {} left unset: {}\n", unset.name, unset.reason);
  return out;
}

std::string Header(const EnvOutcome& env) {
  return fmt::format("# topolaunch env for {} ({} profile)\n", env.host, FabricKindName(env.fabric));
}

std::string DotenvValue(std::string_view value) {
  bool plain = std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_=:,./+@%^-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string FormatEnvSh(const EnvOutcome& env, bool explain) {
  std::string out = explain ? Header(env) : "";
  for (const EnvVariable& variable : env.variables) {
    if (explain) out += ExplainComment(variable);
    out += fmt::format("export {}={}\n", variable.name, ShellQuote(variable.value));
  }
  if (explain) out += UnsetComments(env);
  return out;
}

std::string FormatEnvDotenv(const EnvOutcome& env, bool explain) {
  std::string out = explain ? Header(env) : "";
  for (const EnvVariable& variable : env.variables) {
    if (explain) out += ExplainComment(variable);
    out += fmt::format("{}={}\n", variable.name, DotenvValue(variable.value));
  }
  if (explain) out += UnsetComments(env);
  return out;
}

std::string FormatEnvJson(const EnvOutcome& env) {
  nlohmann::ordered_json json;
  json["schema"] = kEnvSchema;
  json["host"] = env.host;
  json["fabric"] = FabricKindName(env.fabric);
  json["variables"] = nlohmann::ordered_json::array();
  for (const EnvVariable& v : env.variables)
    json["variables"].push_back({{"name", v.name}, {"value", v.value}, {"reason", v.reason},
                                 {"source", EnvSourceName(v.source)}, {"origin", v.origin}});
  json["unset"] = nlohmann::ordered_json::array();
  for (const EnvLeftUnset& u : env.unset) json["unset"].push_back({{"name", u.name}, {"reason", u.reason}});
  json["warnings"] = env.warnings;
  return DumpJsonText(json, 2) + "\n";
}

}  // namespace topolaunch
