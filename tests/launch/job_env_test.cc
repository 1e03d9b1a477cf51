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

TEST(JobEnv, CommonSecretNamesOfOtherToolsAreMaskedToo) {
  for (std::string name : {"MYSQL_PWD", "DB_PASS", "SSHPASS", "GITHUB_PAT", "WANDB_APIKEY", "DATABASE_URL", "SENTRY_DSN",
                           "AZURE_STORAGE_CONNECTION_STRING", "SLACK_WEBHOOK_URL", "TEAMS_WEBHOOK", "PGPASSWORD"})
    EXPECT_TRUE(IsSecretName(name)) << name;
  for (std::string name : {"PWD", "OLDPWD", "PATH", "PATCH_LEVEL", "NCCL_SOCKET_IFNAME", "DSN_COUNT_X"})
    EXPECT_EQ(IsSecretName(name), name == "DSN_COUNT_X") << name;
}

TEST(JobEnv, CredentialsInUrlsAreMaskedWhateverTheName) {
  EXPECT_EQ(DisplayValue("HF_ENDPOINT", "https://user:hunter2@hub.example.com/models"), "https://user:****@hub.example.com/models");
  EXPECT_EQ(DisplayValue("PIP_INDEX_URL", "https://ghp_abc123@pypi.example.com/simple"), "https://****@pypi.example.com/simple");
  EXPECT_EQ(DisplayValue("MIRRORS", "http://a:b@x/ http://c@y"), "http://a:****@x/ http://****@y");
  EXPECT_EQ(DisplayValue("STORE", "https://s3.example.com/b?token=abc&region=eu&sig=x"),
            "https://s3.example.com/b?token=****&region=eu&sig=x");
  EXPECT_EQ(DisplayValue("HOME_PAGE", "https://example.com/a@b"), "https://example.com/a@b") << "an @ in the path is no credential";
  EXPECT_EQ(DisplayValue("NCCL_DEBUG", "INFO"), "INFO");
  using Argv = std::vector<std::string>;
  EXPECT_EQ(DisplayArguments({"--api-key=sk-123", "--hub=https://u:p@h/x", "--epochs=3"}),
            (Argv{"--api-key=****", "--hub=https://u:****@h/x", "--epochs=3"}));
  EXPECT_EQ(DisplayArguments({"train.py", "--hf-token", "hf_abc", "--lr", "0.1", "--api-key", "--dry"}),
            (Argv{"train.py", "--hf-token", "****", "--lr", "0.1", "--api-key", "--dry"}))
      << "the value after a bare secret option is masked; a next option is no value";
  EXPECT_EQ(DisplayArguments({"--", "x", "--token"}), (Argv{"--", "x", "--token"}));
}

}  // namespace
}  // namespace topolaunch
