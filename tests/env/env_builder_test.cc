#include "env/env_builder.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "env/env_format.h"
#include "env/env_test_util.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::ComputeWithBuiltin;
using testing::Values;

struct Fixture {
  Topology topology = testing::MultiRailTopology();
  EnvFacts facts;
  Fixture() {
    facts.topology = &topology;
    facts.host = "dgx01";
    facts.socket_route = SocketRoute{"ens1f0", "route"};
  }
};

TEST(EnvBuilder, UserValueWinsUnlessOverride) {
  Fixture f;
  std::map<std::string, std::string> user = {{"NCCL_IB_HCA", "mlx5"}, {"NCCL_DEBUG", "WARN"}, {"PATH", "/bin"}};
  EnvOutcome env = ComputeWithBuiltin(f.facts, FabricKind::kInfiniband, user);
  EXPECT_EQ(Values(env)["NCCL_IB_HCA"], "mlx5");
  EXPECT_EQ(Values(env)["NCCL_DEBUG"], "WARN");
  for (const EnvVariable& v : env.variables)
    if (v.name == "NCCL_IB_HCA" || v.name == "NCCL_DEBUG") {
      EXPECT_EQ(v.source, EnvSource::kUser) << v.name;
    }
  ASSERT_EQ(env.warnings.size(), 1u);  // only the differing value
  EXPECT_NE(env.warnings[0].find("NCCL_IB_HCA=mlx5 from your environment wins (topolaunch would set =mlx5_0:1,mlx5_1:1)"),
            std::string::npos) << env.warnings[0];

  EnvOutcome overridden = ComputeWithBuiltin(f.facts, FabricKind::kInfiniband, user, /*override_user=*/true);
  EXPECT_EQ(Values(overridden)["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1");
  EXPECT_TRUE(overridden.warnings.empty());
}

TEST(EnvBuilder, WarnsAboutWrongNamesInTheUsersEnvironment) {
  Fixture f;
  std::map<std::string, std::string> user = {{"NCCL_ASYNC_ERROR_HANDLING", "1"}, {"NCCL_TIMEOUT", "1800"},
                                             {"NCCL_IB_QPS_PER_PORT", "4"}, {"NCCL_SOCKET_NTHREADS", "2"}};
  EnvOutcome env = ComputeWithBuiltin(f.facts, FabricKind::kInfiniband, user);
  ASSERT_EQ(env.warnings.size(), 3u);
  EXPECT_NE(env.warnings[0].find("NCCL_ASYNC_ERROR_HANDLING=1, but an old PyTorch name"), std::string::npos) << env.warnings[0];
  EXPECT_NE(env.warnings[0].find("TORCH_NCCL_ASYNC_ERROR_HANDLING"), std::string::npos);
  EXPECT_NE(env.warnings[1].find("NCCL_IB_QPS_PER_CONNECTION"), std::string::npos);
  EXPECT_NE(env.warnings[2].find("NCCL_TIMEOUT"), std::string::npos);
  // The wrong names are never passed on.
  for (const EnvVariable& v : env.variables) EXPECT_FALSE(v.name == "NCCL_TIMEOUT" || v.name == "NCCL_ASYNC_ERROR_HANDLING");
}

TEST(EnvBuilder, OverrideWarnsWhenTheUserSetsWhatTopolaunchLeavesUnset) {
  Fixture f;
  EnvOutcome env = ComputeWithBuiltin(f.facts, FabricKind::kInfiniband, {{"NCCL_TOPO_FILE", "/x.xml"}}, true);
  EXPECT_EQ(Values(env).count("NCCL_TOPO_FILE"), 0u);
  ASSERT_EQ(env.warnings.size(), 1u);
  EXPECT_NE(env.warnings[0].find("unset it yourself"), std::string::npos);
}

TEST(EnvBuilder, HandBuiltRequestWithAWrongNameIsRefused) {
  Fixture f;
  Result<EnvOutcome> env = ComputeEnv(f.facts, {FabricKind::kInfiniband, {{"NCCL_TIMEOUT", "5", "", "x.env:1"}}, {}, false});
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().problems[0].where, "x.env:1");
}

TEST(EnvFormat, ShDotenvAndJson) {
  EnvOutcome env;
  env.host = "n1";
  env.fabric = FabricKind::kInfiniband;
  env.variables = {{"NCCL_IB_HCA", "=mlx5_0:1", "on fabric", EnvSource::kRule, "builtin:infiniband.env:7"},
                   {"NCCL_TOPO_FILE", "/tmp/it's here.xml", "site", EnvSource::kTemplate, "site.env:2"}};
  env.unset = {{"NCCL_CROSS_NIC", "one NIC"}};
  testing::ExpectOnlyRealNames(env);
  EXPECT_EQ(FormatEnvSh(env, false), "export NCCL_IB_HCA='=mlx5_0:1'\nexport NCCL_TOPO_FILE='/tmp/it'\\''s here.xml'\n");
  EXPECT_EQ(FormatEnvDotenv(env, false), "NCCL_IB_HCA==mlx5_0:1\nNCCL_TOPO_FILE=\"/tmp/it's here.xml\"\n");
  std::string explained = FormatEnvSh(env, true);
  EXPECT_NE(explained.find("# NCCL_IB_HCA: on fabric [rule, builtin:infiniband.env:7]\nexport NCCL_IB_HCA="), std::string::npos);
  EXPECT_NE(explained.find("# NCCL_CROSS_NIC left unset: one NIC\n"), std::string::npos);
  nlohmann::json json = nlohmann::json::parse(FormatEnvJson(env));
  EXPECT_EQ(json["schema"], "topolaunch.env/1");
  EXPECT_EQ(json["variables"][1]["source"], "template");
  EXPECT_EQ(json["variables"][1]["value"], "/tmp/it's here.xml");
  EXPECT_EQ(json["unset"][0]["name"], "NCCL_CROSS_NIC");
}

}  // namespace
}  // namespace topolaunch
