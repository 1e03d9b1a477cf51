// Shared by the env tests: every environment computed or printed in any test
// goes through ExpectOnlyRealNames, so no test can see topolaunch emit a
// variable that NCCL, PyTorch or CUDA does not read.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "env/env_builder.h"
#include "env/env_names.h"
#include "env/env_rules.h"
#include "env/env_templates.h"

namespace topolaunch::testing {

/// A port of a fake /sys/class/infiniband tree, as the kernel lays it out:
/// <root>/<dev>/ports/1/{link_layer,state,gids/N,gid_attrs/types/N,gid_attrs/ndevs/N}.
/// `state` is the file's text ("4: ACTIVE"); gids are (index, gid, type).
inline void FakePort(const std::filesystem::path& root, const std::string& dev, const std::string& link_layer,
                     const std::string& state, const std::vector<std::tuple<int, std::string, std::string>>& gids) {
  auto write = [](const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  };
  std::filesystem::path port = root / dev / "ports" / "1";
  write(port / "link_layer", link_layer + "\n");
  write(port / "state", state + "\n");
  for (const auto& [index, gid, type] : gids) {
    write(port / "gids" / std::to_string(index), gid + "\n");
    if (!type.empty()) write(port / "gid_attrs" / "types" / std::to_string(index), type + "\n");
    write(port / "gid_attrs" / "ndevs" / std::to_string(index), "ens1f" + dev.substr(5) + "\n");
  }
}

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
