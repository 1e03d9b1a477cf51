#include "launch/job_env.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(JobEnvTest, ParsesDotenvLines) {
  std::string text =
      "# a comment\n"
      "\n"
      "A=1\n"
      "export B = two words \n"
      "C='lit $x \\n'\n"
      "D=\"esc \\\"q\\\" \\n end\"\n"
      "E=\n"
      "F=v # trailing comment\r\n"
      "A=again\n";
  Result<EnvList> env = ParseEnvFile(text, "job.env");
  ASSERT_TRUE(env.ok()) << env.error().Message();
  EnvList expected = {{"A", "again"}, {"B", "two words"}, {"C", "lit $x \\n"}, {"D", "esc \"q\" \n end"}, {"E", ""}, {"F", "v"}};
  EXPECT_EQ(*env, expected);
}

TEST(JobEnvTest, DotenvErrorsNameEveryLine) {
  Result<EnvList> env = ParseEnvFile("GOOD=1\nno equals\n1BAD=x\nQ='open\n", "job.env");
  ASSERT_FALSE(env.ok());
  std::string message = env.error().Message();
  EXPECT_EQ(env.error().code, ErrorCode::kBadInput);
  EXPECT_NE(message.find("job.env:2"), std::string::npos) << message;
  EXPECT_NE(message.find("job.env:3"), std::string::npos) << message;
  EXPECT_NE(message.find("job.env:4"), std::string::npos) << message;
  EXPECT_EQ(message.find("job.env:1"), std::string::npos) << message;
}

TEST(JobEnvTest, EnvOptionsForwardOrSet) {
  EnvLookup lookup = [](std::string_view name) -> std::optional<std::string> {
    if (name == "HF_TOKEN") return "hf_secret";
    return std::nullopt;
  };
  Result<EnvList> env = ParseEnvOptions({"HF_TOKEN", "X=1=2", "EMPTY="}, lookup);
  ASSERT_TRUE(env.ok());
  EnvList expected = {{"HF_TOKEN", "hf_secret"}, {"X", "1=2"}, {"EMPTY", ""}};
  EXPECT_EQ(*env, expected);

  Result<EnvList> bad = ParseEnvOptions({"NOT_SET_HERE", "bad-name=1"}, lookup);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadUsage);
  EXPECT_NE(bad.error().Message().find("NOT_SET_HERE is not set here"), std::string::npos);
  EXPECT_NE(bad.error().Message().find("bad-name"), std::string::npos);
}

TEST(JobEnvTest, MergeKeepsFirstPlaceLastValue) {
  EnvList merged = MergeEnv({{"A", "1"}, {"B", "2"}}, {{"C", "3"}, {"A", "9"}});
  EnvList expected = {{"A", "9"}, {"B", "2"}, {"C", "3"}};
  EXPECT_EQ(merged, expected);
}

TEST(JobEnvTest, SecretNames) {
  for (std::string name : {"HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "github_token", "MY_APITOKEN",
                           "SSH_AUTH", "GOOGLE_APPLICATION_CREDENTIALS", "PRIVATE_KEY_FILE", "SESSION_COOKIE"})
    EXPECT_TRUE(IsSecretName(name)) << name;
  for (std::string name : {"NCCL_IB_HCA", "MONKEY", "KEYBOARD_LAYOUT", "PATH", "OMP_NUM_THREADS", "MASTER_ADDR"})
    EXPECT_FALSE(IsSecretName(name)) << name;
  EXPECT_EQ(DisplayValue("HF_TOKEN", "hf_abc"), "****");
  EXPECT_EQ(DisplayValue("NCCL_DEBUG", "WARN"), "WARN");
}

}  // namespace
}  // namespace topolaunch
