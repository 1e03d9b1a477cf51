// Shared by the env tests: every environment computed or printed in any test
// goes through ExpectOnlyRealNames, so no test can see topolaunch emit a
// variable that NCCL, PyTorch or CUDA does not read.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "env/env_builder.h"
#include "env/env_names.h"
#include "env/env_rules.h"
#include "env/env_templates.h"

namespace topolaunch::testing {

/// Fails the test for any emitted name not on the real-names list.
inline void ExpectOnlyRealNames(const std::vector<std::string>& names) {
  for (const std::string& name : names) EXPECT_TRUE(IsRealVariableName(name)) << name << " was emitted but is not real";
}

inline void ExpectOnlyRealNames(const EnvOutcome& env) {
  std::vector<std::string> names;
  for (const EnvVariable& v : env.variables) names.push_back(v.name);
  ExpectOnlyRealNames(names);
}

/// ComputeEnv with the built-in profile for `fabric`, checked for real names.
inline EnvOutcome ComputeWithBuiltin(const EnvFacts& facts, FabricKind fabric,
                                     std::map<std::string, std::string> user_env = {}, bool override_user = false) {
  Result<std::vector<TemplateLine>> templates = LoadEnvTemplates("", fabric);
  EXPECT_TRUE(templates.ok()) << (templates.ok() ? "" : templates.error().Message());
  Result<EnvOutcome> env = ComputeEnv(facts, {fabric, templates.ok() ? *templates : std::vector<TemplateLine>{},
                                              std::move(user_env), override_user});
  EXPECT_TRUE(env.ok()) << (env.ok() ? "" : env.error().Message());
  if (!env.ok()) return {};
  ExpectOnlyRealNames(*env);
  return *env;
}

/// name -> value of what was emitted.
inline std::map<std::string, std::string> Values(const EnvOutcome& env) {
  std::map<std::string, std::string> out;
  for (const EnvVariable& v : env.variables) out[v.name] = v.value;
  return out;
}

}  // namespace topolaunch::testing
