// Puts the env together: the profile's lines in order, each value from its
// rule or its literal, then the user's own environment on top (it wins
// unless --override), with warnings for names nothing reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "env/env_facts.h"
#include "env/env_templates.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Where a value came from.
enum class EnvSource { kRule, kTemplate, kUser };

/// "rule", "template", "user".
std::string_view EnvSourceName(EnvSource source);

struct EnvVariable {
  std::string name;
  std::string value;
  std::string reason;
  EnvSource source = EnvSource::kRule;
  std::string origin;  ///< template "file:line", or "environment"
  bool operator==(const EnvVariable&) const = default;
};

/// A variable the profile names but that is left to NCCL's default.
struct EnvLeftUnset {
  std::string name;
  std::string reason;
  bool operator==(const EnvLeftUnset&) const = default;
};

struct EnvOutcome {
  std::string host;
  FabricKind fabric = FabricKind::kTcp;
  std::vector<EnvVariable> variables;  ///< in template order
  std::vector<EnvLeftUnset> unset;
  std::vector<std::string> warnings;   ///< one line each, for stderr
};

struct EnvRequest {
  FabricKind fabric = FabricKind::kTcp;
  std::vector<TemplateLine> templates;          ///< LoadEnvTemplates(dir, fabric)
  std::map<std::string, std::string> user_env;  ///< the user's environment (only NCCL-ish names matter)
  bool override_user = false;                   ///< derived values win over the user's
};

/// Runs the rules the templates name and merges the user's environment.
/// Errors: kBadInput naming the template line when a line's name is not on
/// the real-names list or "@rule" names a variable no rule decides
/// (ParseEnvTemplate already refuses both; this guards hand-built requests).
Result<EnvOutcome> ComputeEnv(const EnvFacts& facts, const EnvRequest& request);

}  // namespace topolaunch
