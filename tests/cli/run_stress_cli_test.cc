// `topolaunch run` on this machine under stress, with a stand-in for
// torchrun (a shell script that ignores torchrun's options): a terminal
// that stops reading, a reader that goes away, a line of 400 MB, and
// control sequences in a node's output. The agent and the supervision are
// the real ones, heartbeats included.
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "launch/executor.h"

namespace topolaunch::testing {
namespace {

class RunStressCliTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
    return dir_.File(name);
  }
  // This machine, one rank, no GPU, a free port, the job given as a script
  // run in torchrun's place; heartbeats every 0.5 s (an agent stops its
  // node after 1.5 s without one).
  std::vector<std::string> Args(const std::string& job_script) {
    return {"run",          "--nproc-per-node", "1",   "--no-gpus", "--master-port", std::to_string(FreePort()),
            "--grace",      "1",                "--heartbeat", "0.5", "--torchrun",  "sh " + Write("job.sh", job_script),
            "--python",     "sh",               Write("t.py", "")};
  }
  // `topolaunch ARGS 2>err | READER`, in bash; returns topolaunch's status.
  ProcessResult Piped(const std::vector<std::string>& args, const std::string& reader) {
    std::string command = ShellQuoteForTest(TopolaunchBinary());
    for (const std::string& arg : args) command += " " + ShellQuoteForTest(arg);
    ProcessSpec spec;
    spec.argv = {"bash", "-c",
                 fmt::format("set -o pipefail; {} 2>{} | {}; echo \"status ${{PIPESTATUS[0]}}\"", command,
                             ShellQuoteForTest(dir_.File("err.txt")), reader)};
    spec.timeout = std::chrono::seconds(90);
    return RunProcess(spec);
  }
  static std::string ShellQuoteForTest(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }
  TempDir dir_;
};

// A terminal that stops reading (a pipe into a slow reader, Ctrl-Z) costs
// output lines, never the job: the heartbeats go on, the agents keep it.
TEST_F(RunStressCliTest, AStalledStdoutForTwentyHeartbeatsDoesNotKillTheJob) {
  // 40 MB of output at once, more than the pipe and the output queue hold,
  // then the job keeps running while nobody reads.
  std::string job = "yes \"$(printf '%0999d' 0)\" | head -n 40000; sleep 6; echo job-done\n";
  ProcessResult result = Piped(Args(job), "(sleep 10; cat >/dev/null)");
  std::string err = ReadFile(dir_.File("err.txt"));
  ASSERT_FALSE(result.timed_out) << err;
  EXPECT_NE(result.out.find("status 0"), std::string::npos) << result.out << err;
  EXPECT_NE(err.find("1 of 1 node(s) ok; succeeded"), std::string::npos) << err;
  EXPECT_EQ(err.find("no heartbeat"), std::string::npos) << err;
  EXPECT_NE(err.find("output line(s) dropped here"), std::string::npos) << "the lost lines are not counted: " << err;
}

// `| head -1`: our stdout closes under us. The job is still supervised to
// its end, and the summary comes on stderr.
TEST_F(RunStressCliTest, AClosedStdoutKeepsTheJobSupervisedToTheEnd) {
  std::string job = "yes \"$(printf '%05000d' 0)\" | head -n 2000; sleep 2; echo job-done; exit 4\n";
  ProcessResult result = Piped(Args(job), "head -c 100 >/dev/null");
  std::string err = ReadFile(dir_.File("err.txt"));
  ASSERT_FALSE(result.timed_out) << err;
  EXPECT_NE(result.out.find("status 1"), std::string::npos) << "the job's failure, not a crash: " << result.out << err;
  EXPECT_NE(err.find("cannot write to stdout (Broken pipe)"), std::string::npos) << err;
  EXPECT_NE(err.find("0 of 1 node(s) ok; failed"), std::string::npos) << err;
  EXPECT_NE(err.find("exit 4"), std::string::npos) << err;
}

// 400 MB without a newline: the agent and `run` each hold at most one line's
// limit (1 MiB) of it. The peak resident set of `run` and everything it
// waited for (the agent, the job) stays under 64 MiB; it was 1.5 GB.
TEST_F(RunStressCliTest, AFourHundredMegabyteLineKeepsEveryProcessUnder64MiB) {
  std::string job = "head -c 400000000 /dev/zero | tr '\\0' x; echo; echo after-the-long-line\n";
  ProcessResult result = RunTopolaunch(Args(job));
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_NE(result.out.find(std::string(LineSplitter::kCutMarker)), std::string::npos);
  EXPECT_NE(result.out.find("[0]: after-the-long-line\n"), std::string::npos) << result.out.substr(result.out.size() - 200);
  EXPECT_LT(result.out.size(), 2u << 20) << "more than one cut line came through";
  EXPECT_LT(result.max_rss_kb, 64 * 1024) << "peak resident set of run, agent and job, in KiB";
}

// A node's output cannot drive the user's terminal: control characters
// arrive visible, as `cat -v` shows them; --log-dir keeps the bytes.
TEST_F(RunStressCliTest, ControlSequencesFromANodeReachTheTerminalVisible) {
  std::string job = "printf 'title \\033]0;owned\\007 clear \\033[2J done\\n'\n";
  ProcessResult result = RunTopolaunch(Args(job));
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.out.find('\033'), std::string::npos) << "an escape reached the terminal";
  EXPECT_NE(result.out.find("[0]: title ^[]0;owned^G clear ^[[2J done\n"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace topolaunch::testing
