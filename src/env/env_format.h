// The env as text: sh (export lines), dotenv, or JSON; with --explain, sh and
// dotenv carry each variable's reason and source as comments.
#pragma once

#include <string>
#include <string_view>

#include "env/env_builder.h"

namespace topolaunch {

inline constexpr std::string_view kEnvSchema = "topolaunch.env/1";

/// "export NAME='value'" lines, single-quoted for POSIX sh.
std::string FormatEnvSh(const EnvOutcome& env, bool explain);

/// "NAME=value" lines; values outside [A-Za-z0-9_=:,./+@%^-] are double-quoted.
std::string FormatEnvDotenv(const EnvOutcome& env, bool explain);

/// {"schema": "topolaunch.env/1", "host", "fabric", "variables": [{"name",
/// "value", "reason", "source", "origin"}], "unset": [{"name", "reason"}],
/// "warnings": [..]}; reasons are always included.
std::string FormatEnvJson(const EnvOutcome& env);

}  // namespace topolaunch
