#include "launch/launch_message.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/launch_printers.h"

#include "support/fake_executor.h"

namespace topolaunch {
namespace {

TEST(LaunchMessage, RoundTripsAnyArgumentsAndEnvironment) {
  LaunchMessage message;
  message.command = {{"torchrun", "a b", "it's", "x\ny", "$HOME;", "é", ""}, {{"NCCL_IB_HCA", "mlx5_0"}, {"SECRET", "p\"w\n"}}, "/w"};
  message.grace = std::chrono::milliseconds(1234);
  message.heartbeat = std::chrono::milliseconds(250);
  message.rank_output = true;
  std::string line = FormatLaunchMessage(message);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line only";
  Result<LaunchMessage> parsed = ParseLaunchMessage(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(parsed->command.argv, message.command.argv);
  EXPECT_EQ(parsed->command.cwd, "/w");
  EXPECT_EQ(parsed->grace, message.grace);
  EXPECT_EQ(parsed->heartbeat, message.heartbeat);
  EXPECT_TRUE(parsed->rank_output);
  auto env = parsed->command.env;
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env, message.command.env);
}

// Arguments, values and folders are bytes: a Latin-1 file name must reach
// the script unchanged, and the line must stay valid UTF-8 JSON.
TEST(LaunchMessage, CarriesBytesThatAreNotUtf8Unchanged) {
  LaunchMessage message;
  message.command = {{"python3", "caf\xE9.txt", "\xFF", "ok \xC3\xA9"}, {{"LABEL", "r\xE9sum\xE9"}}, "/data/caf\xE9"};
  std::string line = FormatLaunchMessage(message);
  EXPECT_TRUE(nlohmann::json::accept(line)) << "the line must be valid JSON (UTF-8): " << line;
  EXPECT_NE(line.find(R"("ok é")"), std::string::npos) << "valid UTF-8 stays a plain string: " << line;
  Result<LaunchMessage> parsed = ParseLaunchMessage(line);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(parsed->command, message.command);
}

TEST(LaunchMessage, DefaultsForOptionalFields) {
  Result<LaunchMessage> parsed = ParseLaunchMessage(R"({"argv":["hostname"]})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().Message();
  EXPECT_EQ(parsed->command, (Command{{"hostname"}, {}, ""}));
  EXPECT_EQ(parsed->grace, std::chrono::milliseconds(5000));
  EXPECT_EQ(parsed->heartbeat, std::chrono::milliseconds(0));  // off: a hand-written message needs no heartbeats
  EXPECT_FALSE(parsed->rank_output);  // the ranks share the command's output
}

struct BadCase {
  std::string text;
  std::vector<std::string> wheres;
};

class BadLaunchMessageTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadLaunchMessageTest, ReportsEveryProblemByPath) {
  Result<LaunchMessage> parsed = ParseLaunchMessage(GetParam().text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kBadInput);
  std::vector<std::string> wheres;
  for (const Problem& p : parsed.error().problems) wheres.push_back(p.where);
  EXPECT_EQ(wheres, GetParam().wheres) << parsed.error().Message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadLaunchMessageTest,
    ::testing::Values(
        BadCase{R"({"argv":[]})", {"launch message: $.argv"}},
        BadCase{R"({"env":{"1X":"a","B":2},"grace_ms":-1})",
                {"launch message: $.argv", "launch message: $.env.1X", "launch message: $.env.B",
                 "launch message: $.grace_ms"}},
        BadCase{R"({"argv":["x"],"heartbeat_ms":"5"})", {"launch message: $.heartbeat_ms"}},
        BadCase{R"({"argv":["x"],"rank_output":1})", {"launch message: $.rank_output"}},
        BadCase{R"({"argv":["x"],"heartbeat_ms":3600001})", {"launch message: $.heartbeat_ms"}},
        BadCase{R"([1])", {"launch message: $"}},
        BadCase{R"({"argv":["x",{"hex":"4"},3],"env":{"A":{"hex":"zz"}},"cwd":{"b":"00"}})",
                {"launch message: $.argv[1]", "launch message: $.argv[2]", "launch message: $.env.A",
                 "launch message: $.cwd"}}));

TEST(FakeExecutor, RecordsRequestsAndStops) {
  testing::FakeExecutor fake;
  testing::FakeExecutor::Script failing;
  failing.start_error = Error(ErrorCode::kUnavailable, "n2", "refused");
  testing::FakeExecutor::Script long_running;
  long_running.runs_until_stopped = true;
  long_running.lines = {{OutputStream::kStdout, "hello"}};
  fake.SetScript("n2", failing);
  fake.SetScript("n3", long_running);
  std::vector<LaunchRequest> requests = {{"n1", {{"a"}}}, {"n2", {{"b"}}}, {"n3", {{"c"}}}};
  std::vector<std::string> seen;
  std::vector<StartResult> started =
      fake.StartAll(requests, [&](size_t i, OutputStream, std::string_view l) { seen.push_back(std::to_string(i) + std::string(l)); });
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ((*started[0])->Wait(std::chrono::milliseconds(0)), ExitInfo{.exit_code = 0});
  EXPECT_FALSE(started[1].ok());
  EXPECT_EQ((*started[2])->Wait(std::chrono::milliseconds(0)), std::nullopt);
  EXPECT_EQ((*started[2])->Stop(std::chrono::milliseconds(0)).signal, "TERM");
  EXPECT_EQ(seen, std::vector<std::string>{"2hello"});
  EXPECT_EQ(fake.requests().size(), 3u);
  EXPECT_EQ(fake.stopped(), std::vector<std::string>{"n3"});
}

}  // namespace
}  // namespace topolaunch
