#include "env/env_builder.h"

#include <fmt/format.h>

#include "env/env_names.h"
#include "env/env_rules.h"

namespace topolaunch {

namespace {

// A derived or template value, before the user's environment is applied.
struct Candidate {
  std::optional<EnvVariable> variable;  // nullopt: left unset
  std::string unset_reason;
};

Candidate Decide(const TemplateLine& line, const RuleInput& input, std::vector<std::string>& warnings) {
  if (line.value != kRuleValue) {
    std::string reason = line.reason.empty() ? "site default" : line.reason;
    return {EnvVariable{line.name, line.value, reason, EnvSource::kTemplate, line.origin}, ""};
  }
  RuleOutcome outcome = FindEnvRule(line.name)->decide(input);
  if (!outcome.warning.empty()) warnings.push_back(line.name + ": " + outcome.warning);
  if (outcome.value.empty()) return {std::nullopt, outcome.reason};
  return {EnvVariable{line.name, outcome.value, outcome.reason, EnvSource::kRule, line.origin}, ""};
}

void WarnAboutUserNames(const std::map<std::string, std::string>& user_env, std::vector<std::string>& warnings) {
  for (const auto& [name, value] : user_env) {
    if (!LooksLikeNcclName(name)) continue;
    if (std::optional<std::string> why = ExplainUnknownName(name))
      warnings.push_back(fmt::format("your environment sets {}={}, but {}", name, value, *why));
  }
}

}  // namespace

std::string_view EnvSourceName(EnvSource source) {
  switch (source) {
    case EnvSource::kRule: return "rule";
    case EnvSource::kTemplate: return "template";
    case EnvSource::kUser: return "user";
  }
  return "rule";
}

Result<EnvOutcome> ComputeEnv(const EnvFacts& facts, const EnvRequest& request) {
  // Templates are checked when parsed; this guards hand-built requests.
  std::vector<Problem> bad;
  for (const TemplateLine& line : request.templates) {
    if (!IsRealVariableName(line.name))
      bad.push_back({line.origin, fmt::format("refusing to emit {}: not a variable NCCL, PyTorch or CUDA reads", line.name)});
    else if (line.value == kRuleValue && !FindEnvRule(line.name))
      bad.push_back({line.origin, fmt::format("no rule derives {}", line.name)});
  }
  if (!bad.empty()) return Error(ErrorCode::kBadInput, std::move(bad));
  EnvOutcome out;
  out.host = facts.host;
  out.fabric = request.fabric;
  WarnAboutUserNames(request.user_env, out.warnings);
  RuleInput input{facts, request.fabric};
  for (const TemplateLine& line : request.templates) {
    Candidate candidate = Decide(line, input, out.warnings);
    auto user = request.user_env.find(line.name);
    bool user_wins = user != request.user_env.end() && !request.override_user;
    if (user_wins) {
      std::string ours = candidate.variable ? "topolaunch would set " + candidate.variable->value
                                            : "topolaunch would leave it unset";
      if (!candidate.variable || candidate.variable->value != user->second)
        out.warnings.push_back(fmt::format("{}={} from your environment wins ({}); use --override to replace it",
                                           line.name, user->second, ours));
      out.variables.push_back({line.name, user->second, "set in your environment; " + ours, EnvSource::kUser, "environment"});
      continue;
    }
    if (user != request.user_env.end() && !candidate.variable)
      out.warnings.push_back(fmt::format("--override: topolaunch leaves {} to NCCL, but your environment sets it to {}; "
                                         "unset it yourself", line.name, user->second));
    if (candidate.variable) out.variables.push_back(std::move(*candidate.variable));
    else out.unset.push_back({line.name, candidate.unset_reason});
  }
  return out;
}

}  // namespace topolaunch
