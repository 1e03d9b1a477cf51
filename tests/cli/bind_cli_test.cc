// `topolaunch bind` end to end: the real numactl binds the real program
// (read back from /proc/self/status), arguments arrive byte for byte, bind
// execs in place (the program's parent is whoever started bind), and the
// exit statuses for bad environments and a missing numactl.
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace topolaunch {
namespace {

using testing::ProcessResult;
using testing::RunTopolaunch;
using Env = std::vector<std::pair<std::string, std::string>>;

bool NumactlInstalled() {
  ProcessResult found = testing::RunProcess({{"/bin/sh", "-c", "command -v numactl"}, {}, "", std::chrono::seconds(10)});
  return found.exit_code == 0;
}

bool MayRunOn(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(cpu, &set);
}

// `topolaunch bind [FLAGS] -- PROGRAM...` with `env` on top of ours and
// LOCAL_RANK / TOPOLAUNCH_BINDINGS removed first unless `env` sets them.
ProcessResult Bind(const Env& env, std::vector<std::string> program, std::vector<std::string> flags = {}) {
  testing::ProcessSpec spec;
  spec.argv = {"/usr/bin/env", "-u", "LOCAL_RANK", "-u", "TOPOLAUNCH_BINDINGS"};
  for (const auto& [key, value] : env) spec.argv.push_back(key + "=" + value);
  spec.argv.push_back(testing::TopolaunchBinary());
  spec.argv.push_back("bind");
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), program.begin(), program.end());
  return testing::RunProcess(spec);
}

const std::vector<std::string> kShowCpus = {"/bin/grep", "-E", "^(Cpus|Mems)_allowed_list", "/proc/self/status"};

TEST(BindCli, BindsCpusOfTheLocalRank) {
  ASSERT_TRUE(NumactlInstalled()) << "numactl not installed (bash tests/install_deps.sh build)";
  if (!MayRunOn(0) || !MayRunOn(1)) GTEST_SKIP() << "the test needs CPUs 0 and 1, and this machine lets it run on fewer";
  for (int rank : {0, 1}) {
    SCOPED_TRACE(rank);
    ProcessResult r = Bind({{"TOPOLAUNCH_BINDINGS", "0/;1/"}, {"LOCAL_RANK", std::to_string(rank)}}, kShowCpus);
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_NE(r.out.find(fmt::format("Cpus_allowed_list:\t{}\n", rank)), std::string::npos) << r.out;
  }
}

TEST(BindCli, BindsMemoryOfTheLocalRank) {
  ASSERT_TRUE(NumactlInstalled()) << "numactl not installed (bash tests/install_deps.sh build)";
  if (!std::filesystem::exists("/sys/devices/system/node/node0")) GTEST_SKIP() << "this machine shows no NUMA node 0 in sysfs";
  // Mems_allowed_list is the cpuset's; numa_maps shows the policy numactl set.
  ProcessResult r = Bind({{"TOPOLAUNCH_BINDINGS", "/0"}, {"LOCAL_RANK", "0"}},
                         {"/bin/grep", "-h", "-m1", "-E", "^Mems_allowed_list|bind:0", "/proc/self/status",
                          "/proc/self/numa_maps"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("Mems_allowed_list:\t0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" bind:0 "), std::string::npos) << r.out;
  ProcessResult unbound = Bind({}, {"/bin/grep", "-c", "bind:", "/proc/self/numa_maps"});
  EXPECT_EQ(unbound.out, "0\n") << unbound.Describe();
}

TEST(BindCli, UnboundRunsTheProgramAsIs) {
  std::string own = testing::ReadFile("/proc/self/status");
  auto cpus_line = [](const std::string& status) {
    size_t at = status.find("Cpus_allowed_list:");
    return at == std::string::npos ? std::string() : status.substr(at, status.find('\n', at) - at + 1);
  };
  const std::vector<Env> envs = {{}, {{"TOPOLAUNCH_BINDINGS", ""}}, {{"TOPOLAUNCH_BINDINGS", "0/0;/"}, {"LOCAL_RANK", "1"}}};
  for (const Env& env : envs) {
    SCOPED_TRACE(env.empty() ? "no bindings" : env[0].second);
    // --numactl is ignored when nothing needs binding.
    ProcessResult r = Bind(env, kShowCpus, {"--numactl", "/nonexistent/numactl"});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(cpus_line(r.out), cpus_line(own));
    EXPECT_EQ(r.err, "");
  }
}

TEST(BindCli, PassesArgumentsByteForByte) {
  const std::vector<std::string> args = {"--help", "-h", "", "a b", "'\"$;\n", "[]", "[a,b]", "{}", "%%", "--",
                                         "--numactl=x", "--lr", "0.1", "plan", "bind", "-", "\\", "\xc3\xa9",
                                         "  lead", "trail ", "*", "$(id)", "`id`"};
  std::string expected;
  for (const std::string& a : args) expected += a + '\0';
  std::vector<std::string> program = {"/bin/sh", "-c", "printf '%s\\0' \"$@\"", "sh"};
  program.insert(program.end(), args.begin(), args.end());
  std::vector<Env> envs = {{}};
  if (NumactlInstalled() && MayRunOn(0)) envs.push_back({{"TOPOLAUNCH_BINDINGS", "0/"}, {"LOCAL_RANK", "0"}});
  for (const Env& env : envs) {
    SCOPED_TRACE(env.empty() ? "unbound" : "through numactl");
    ProcessResult r = Bind(env, program);
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.out, expected);
  }
  // A program named like an option or a subcommand is still the program.
  ProcessResult r = Bind({}, {"--help"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("--help: cannot run"), std::string::npos) << r.err;
}

TEST(BindCli, ExecsInPlace) {
  std::vector<Env> envs = {{}};
  if (NumactlInstalled() && MayRunOn(0)) envs.push_back({{"TOPOLAUNCH_BINDINGS", "0/"}, {"LOCAL_RANK", "0"}});
  for (const Env& env : envs) {
    SCOPED_TRACE(env.empty() ? "unbound" : "through numactl");
    // RunProcess forks this process, the child execs env, which execs
    // topolaunch: with no process in between the program's parent is us.
    ProcessResult r = Bind(env, {"/bin/grep", "^PPid:", "/proc/self/status"});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.out, fmt::format("PPid:\t{}\n", getpid()));
  }
  ProcessResult status = Bind({}, {"/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(status.exit_code, 7) << status.Describe();
}

struct FailureCase {
  std::string name;
  Env env;
  std::vector<std::string> flags;
  int exit_code;
  std::vector<std::string> messages;  ///< each in stderr
};

TEST(BindCli, FailsWithTheRightStatus) {
  const std::vector<FailureCase> cases = {
      {"LOCAL_RANK missing", {{"TOPOLAUNCH_BINDINGS", "0/"}}, {}, 2, {"error: LOCAL_RANK: not set"}},
      {"LOCAL_RANK not a number", {{"TOPOLAUNCH_BINDINGS", "0/"}, {"LOCAL_RANK", "one"}}, {}, 2,
       {"error: LOCAL_RANK: \"one\" is not a number"}},
      {"LOCAL_RANK with a space", {{"TOPOLAUNCH_BINDINGS", "0/"}, {"LOCAL_RANK", "0 "}}, {}, 2, {"LOCAL_RANK"}},
      {"bad spec", {{"TOPOLAUNCH_BINDINGS", "0/0;x/1;2"}, {"LOCAL_RANK", "0"}}, {}, 2,
       {"error: TOPOLAUNCH_BINDINGS: entry 1 (local rank 1) \"x/1\"", "error: TOPOLAUNCH_BINDINGS: entry 2"}},
      {"bad spec and LOCAL_RANK at once", {{"TOPOLAUNCH_BINDINGS", "x"}}, {}, 2, {"TOPOLAUNCH_BINDINGS", "LOCAL_RANK"}},
      {"local rank out of range", {{"TOPOLAUNCH_BINDINGS", "0/;1/"}, {"LOCAL_RANK", "2"}}, {}, 2,
       {"no entry for local rank 2"}},
      {"--numactl missing", {{"TOPOLAUNCH_BINDINGS", "0/"}, {"LOCAL_RANK", "0"}}, {"--numactl", "/nonexistent"}, 3,
       {"error: --numactl: /nonexistent"}},
      {"numactl not in PATH", {{"TOPOLAUNCH_BINDINGS", "/0"}, {"LOCAL_RANK", "0"}, {"PATH", "/nonexistent"}}, {}, 3,
       {"numactl not found (apt-get install numactl)"}},
  };
  for (const FailureCase& c : cases) {
    SCOPED_TRACE(c.name);
    ProcessResult r = Bind(c.env, {"/bin/true"}, c.flags);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.Describe();
    EXPECT_EQ(r.out, "");
    for (const std::string& message : c.messages) EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST(BindCli, RefusesBadUsage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"bind", "/bin/true"}, "put -- before the program"},
      {{"bind", "--foo", "--", "/bin/true"}, "unknown option --foo"},
      {{"bind"}, "program is required"},
      {{"bind", "--"}, "program is required"},
      {{"bind", "/bin/echo", "--", "x"}, "not expected"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.back());
    ProcessResult r = RunTopolaunch(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.Describe();
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  ProcessResult missing = Bind({}, {"/nonexistent/program", "x"});
  EXPECT_EQ(missing.exit_code, 3) << missing.Describe();
  EXPECT_NE(missing.err.find("/nonexistent/program: cannot run: No such file or directory"), std::string::npos)
      << missing.err;
}

TEST(BindCli, IsHiddenButDocumented) {
  ProcessResult list = RunTopolaunch({"--help"});
  EXPECT_EQ(list.out.find("\n  bind "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\n  plan "), std::string::npos) << list.out;  // the form a listed one has
  ProcessResult help = RunTopolaunch({"bind", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.Describe();
  EXPECT_NE(help.out.find("topolaunch bind [--numactl PATH] -- PROGRAM [ARGS...]"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace topolaunch
