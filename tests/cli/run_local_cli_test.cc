// `topolaunch run` on this machine alone (no hosts, no Slurm: the local
// executor, no SSH): bad usage, preflight refusals, --dry-run, and real
// torchrun jobs (Debian's python3-torch; skipped without it) that succeed,
// fail on one rank, or are interrupted, leaving no process behind.
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "audit/audit_fake_sysfs.h"
#include "cli/cli_test_util.h"

namespace topolaunch::testing {
namespace {

using std::chrono::milliseconds;

const char* kTorchrun = "/usr/bin/torchrun --redirects 9:0 --tee 9:0";  // Debian's torch 1.13 needs both (TESTBED.md)

bool HaveTorch() { return access("/usr/bin/torchrun", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0; }

// Processes whose command line mentions `marker` (a path unique to the test).
std::vector<std::string> ProcessesMentioning(const std::string& marker) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  while (dirent* entry = proc ? readdir(proc) : nullptr) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string cmdline = ReadFile(std::string("/proc/") + entry->d_name + "/cmdline");
    if (cmdline.find(marker) != std::string::npos) found.push_back(std::string(entry->d_name) + ": " + cmdline);
  }
  if (proc) closedir(proc);
  return found;
}

std::vector<std::string> WaitUntilNoProcessMentions(const std::string& marker, milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<std::string> left = ProcessesMentioning(marker);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
    left = ProcessesMentioning(marker);
  }
  return left;
}


class RunLocalCliTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
    return dir_.File(name);
  }
  // Options every job here shares: this machine, CPU ranks, a free port.
  std::vector<std::string> Base(int nproc) {
    return {"run", "--nproc-per-node", std::to_string(nproc), "--no-gpus", "--master-port", std::to_string(FreePort()),
            "--grace", "1"};
  }
  TempDir dir_;
};

TEST_F(RunLocalCliTest, BadUsageIsExit2NamingTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"run", "--nproc-per-node", "1"}, "no SCRIPT given"},
      {{"run", "--nproc-per-node", "1", "--torchrun", "torchrun 'x", "t.py"}, "--torchrun"},
      {{"run", "--nproc-per-node", "1", "--hosts=-oProxyCommand", "t.py"}, "not a host name"},
      {{"run", "--nproc-per-node", "1", "--hosts", "node1,no;de2", "t.py"}, "cannot be in a host name"},
      {{"run", "--nproc-per-node", "1", "--env", "NOT_SET_ANYWHERE_XYZ", "t.py"}, "NOT_SET_ANYWHERE_XYZ is not set here"},
      {{"run", "--nproc-per-node", "1", "--env-file", Write("bad.env", "A=1\nno equals sign\n"), "t.py"}, "bad.env:2"},
      {{"run", "--nproc-per-node", "1", "--hostfile", dir_.File("absent"), "t.py"}, "absent"},
      {{"run", "--nproc-per-node", "1", "--", "t.py", "a"}, "run takes no `--`"},
  };
  for (const Case& c : cases) {
    ProcessResult result = RunTopolaunch(c.args);
    EXPECT_EQ(result.exit_code, 2) << c.says << "\n" << result.Describe();
    EXPECT_NE(result.err.find(c.says), std::string::npos) << result.err;
  }
}

TEST_F(RunLocalCliTest, PreflightRefusesAndStartsNothing) {
  std::vector<std::string> args = Base(1);
  args.insert(args.end(), {"--torchrun", "no-such-torchrun-xyz", "--python", "sh", Write("t.py", "")});
  ProcessResult result = RunTopolaunch(args);
  EXPECT_EQ(result.exit_code, 3) << result.Describe();
  EXPECT_NE(result.err.find("nothing was started"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("no-such-torchrun-xyz"), std::string::npos) << result.err;

  // More ranks than GPUs (a GPU job: no --no-gpus).
  ProcessResult gpus = RunTopolaunch({"run", "--nproc-per-node", "4096", "--torchrun", "sh", "--python", "sh", dir_.File("t.py")});
  EXPECT_EQ(gpus.exit_code, 3) << gpus.Describe();
  EXPECT_NE(gpus.err.find("GPU"), std::string::npos) << gpus.err;
}

// Like torchrun, no --nproc-per-node is needed: one rank with --no-gpus,
// else one per GPU the nodes report (this machine has none: it says so and
// what to pass instead).
TEST_F(RunLocalCliTest, RanksPerNodeDefaultToOneWithNoGpusElseToTheGpus) {
  Write("t.py", "");
  ProcessResult cpu = RunTopolaunch({"run", "--no-gpus", "--master-port", std::to_string(FreePort()), "--torchrun", "sh -c true",
                                     "--python", "sh", "--cwd", dir_.path(), "--dry-run", "t.py"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.Describe();
  EXPECT_NE(cpu.out.find("'--nnodes=1' '--nproc_per_node=1' "), std::string::npos) << cpu.out;

  ProcessResult gpu = RunTopolaunch({"run", "--master-port", std::to_string(FreePort()), "--torchrun", "sh", "--python", "sh",
                                     "--cwd", dir_.path(), "t.py"});
  EXPECT_EQ(gpu.exit_code, 3) << gpu.Describe();
  EXPECT_NE(gpu.err.find("topolaunch: error: preflight: no GPU found on "), std::string::npos) << gpu.err;
  EXPECT_NE(gpu.err.find("pass --no-gpus (one rank per node) or --nproc-per-node N"), std::string::npos) << gpu.err;
}

// As plain `torchrun train.py` does, the script runs under torchrun's own
// Python (Debian's torchrun: #!/usr/bin/python3.11), not under the first
// python3 on PATH, which here has no torch.
TEST_F(RunLocalCliTest, TheScriptRunsUnderTorchrunsOwnPythonNotTheFirstOnPath) {
  std::filesystem::create_directories(dir_.File("bin"));
  std::string fake = Write("bin/python3", "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  Write("t.py", "import os, sys\nprint('@ran', sys.executable, os.environ['WORLD_SIZE'], flush=True)\n");
  const char* path = std::getenv("PATH");
  ProcessResult result = RunTopolaunch({"run", "--no-gpus", "--master-port", std::to_string(FreePort()), "--torchrun",
                                        "torchrun --redirects 9:0 --tee 9:0", "--cwd", dir_.path(), "t.py"},
                                       {{"PATH", dir_.File("bin") + ":" + (path ? path : "/usr/bin:/bin")}});
  ASSERT_EQ(result.exit_code, 0) << result.Describe() << "\nstdout: " << result.out;
  EXPECT_NE(result.out.find("@ran /usr/bin/python3.11 1\n"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("python: the one torchrun runs under (its #! line): /usr/bin/python3.11 ("), std::string::npos)
      << result.err;
}

TEST_F(RunLocalCliTest, PreflightRefusesAMissingScriptOrFolder) {
  std::vector<std::string> args = Base(1);
  args.insert(args.end(), {"--torchrun", "sh", "--python", "sh", "--cwd", dir_.path(), "no-such-script.py"});
  ProcessResult script = RunTopolaunch(args);
  EXPECT_EQ(script.exit_code, 3) << script.Describe();
  EXPECT_NE(script.err.find(dir_.File("no-such-script.py") + ": No such file or directory"), std::string::npos) << script.err;

  args = Base(1);
  args.insert(args.end(), {"--torchrun", "sh", "--python", "sh", "--cwd", dir_.File("absent-folder"), "t.py"});
  ProcessResult folder = RunTopolaunch(args);
  EXPECT_EQ(folder.exit_code, 3) << folder.Describe();
  EXPECT_NE(folder.err.find("working folder " + dir_.File("absent-folder") + ": No such file or directory"), std::string::npos)
      << folder.err;
}

TEST_F(RunLocalCliTest, PreflightRefusesABusyMasterPort) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string port = std::to_string(ntohs(addr.sin_port));
  ProcessResult result = RunTopolaunch({"run", "--nproc-per-node", "1", "--no-gpus", "--master-port", port, "--torchrun", "sh",
                                        "--python", "sh", Write("t.py", "")});
  close(fd);
  EXPECT_EQ(result.exit_code, 3) << result.Describe();
  EXPECT_NE(result.err.find(port), std::string::npos) << result.err;
}

TEST_F(RunLocalCliTest, DryRunPrintsTheExactCommandWithSecretsMasked) {
  std::vector<std::string> args = Base(2);
  Write("train.py", "");
  args.insert(args.end(), {"--torchrun", "sh -c true", "--python", "/usr/bin/env", "--env", "HF_TOKEN", "--env", "PLAIN=visible",
                           "--cwd", dir_.path(), "--dry-run", "train.py", "--lr", "a b", "$x;"});
  ProcessResult result = RunTopolaunch(args, {{"HF_TOKEN", "hf_do_not_print"}});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.out.find("hf_do_not_print"), std::string::npos) << result.out;
  EXPECT_EQ(result.err.find("hf_do_not_print"), std::string::npos) << result.err;
  EXPECT_NE(result.out.find("export HF_TOKEN='****'"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("export PLAIN='visible'"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("'sh' '-c' 'true' '--nnodes=1' '--nproc_per_node=2' '--node_rank=0' '--master_addr=127.0.0.1'"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("'bind' '--' '/usr/bin/env' 'train.py' '--lr' 'a b' '$x;'"), std::string::npos) << result.out;
}

TEST_F(RunLocalCliTest, EnvFileAndEnvOptionsAndMasterAddressReachTheCommand) {
  std::vector<std::string> args = Base(1);
  args.insert(args.end(), {"--torchrun", "sh -c true", "--python", "sh", "--env-file",
                           Write("job.env", "# job settings\nFROM_FILE='one two'\nSHARED=file\n"), "--env", "SHARED=flag",
                           "--master-addr", "10.9.8.7", "--dry-run", Write("t.py", "")});
  ProcessResult result = RunTopolaunch(args);
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_NE(result.out.find("export FROM_FILE='one two'"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("export SHARED='flag'"), std::string::npos) << result.out;  // --env wins over the file
  EXPECT_EQ(result.out.find("SHARED='file'"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("'--master_addr=10.9.8.7'"), std::string::npos) << result.out;
}

TEST_F(RunLocalCliTest, SlurmAllocationGivesTheHostsAndAnUnreachableOneStopsEverything) {
  // Inside an allocation without --hosts, SLURM_JOB_NODELIST names the nodes:
  // here one whose sshd is not there (or whose key is not known) -- exit 3,
  // naming it, nothing started.
  std::vector<std::string> args = Base(1);
  args.insert(args.end(), {"--torchrun", "sh", "--python", "sh", "--connect-timeout", "2", "t.py"});
  ProcessResult result = RunTopolaunch(args, {{"SLURM_JOB_NODELIST", "127.0.0.1"}, {"HOME", dir_.path()}, {"SSH_AUTH_SOCK", ""}});
  EXPECT_EQ(result.exit_code, 3) << result.Describe();
  EXPECT_NE(result.err.find("  127.0.0.1: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("nothing was started"), std::string::npos) << result.err;
}

TEST_F(RunLocalCliTest, LogDirGetsEachNodesOutputInItsFile) {
  std::vector<std::string> args = Base(1);
  // A stand-in for torchrun that ignores its options and prints two lines.
  args.insert(args.end(), {"--torchrun", "sh -c 'echo to-stdout; echo to-stderr >&2' torchrun", "--python", "sh", "--log-dir",
                           dir_.File("logs/run1"), Write("t.py", "")});
  ProcessResult result = RunTopolaunch(args);
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.out.find("to-stdout"), std::string::npos) << result.out;
  std::vector<std::string> logs;
  DIR* dir = opendir(dir_.File("logs/run1").c_str());
  while (dirent* entry = dir ? readdir(dir) : nullptr)
    if (entry->d_name[0] != '.') logs.push_back(entry->d_name);
  if (dir) closedir(dir);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_TRUE(logs[0].ends_with(".log")) << logs[0];
  std::string log = ReadFile(dir_.File("logs/run1/" + logs[0]));
  EXPECT_NE(log.find("to-stdout\n"), std::string::npos) << log;
  EXPECT_NE(log.find("to-stderr\n"), std::string::npos) << log;
  EXPECT_NE(result.err.find("1 of 1 node(s) ok; succeeded"), std::string::npos) << result.err;
}

TEST_F(RunLocalCliTest, TorchrunJobGetsArgumentsBindingsAndSecretExactly) {
  ASSERT_TRUE(HaveTorch()) << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
  std::string script = Write("job.py",
                             "import os, sys\n"
                             "cpus = open('/proc/self/status').read().split('Cpus_allowed_list:')[1].split()[0]\n"
                             "line = ' '.join(['JOB', os.environ['RANK'], cpus, repr(sys.argv[1:]), str(os.environ.get('MY_TOKEN'))])\n"
                             // One write per line: two ranks share torchrun's stdout, and print()
                             // under PYTHONUNBUFFERED writes text and newline separately.
                             "os.write(1, (line + '\\n').encode())\n");
  std::vector<std::string> args = Base(2);
  std::vector<std::string> script_args = {"--help", "", "a b", "it's \"q\"", "$HOME;`x`", "line\nbreak"};
  args.insert(args.end(), {"--torchrun", kTorchrun, "--python", "/usr/bin/python3", "--env", "MY_TOKEN", script});
  args.insert(args.end(), script_args.begin(), script_args.end());
  ProcessResult result = RunTopolaunch(args, {{"MY_TOKEN", "tok-123"}});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  std::string argv_repr = "['--help', '', 'a b', 'it\\'s \"q\"', '$HOME;`x`', 'line\\nbreak']";
  for (int rank : {0, 1}) {
    std::string cpus = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? std::to_string(rank) : "0";
    std::string line = fmt::format("[0] {}: JOB {} {} {} tok-123", rank, rank, cpus, argv_repr);
    EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n" << result.out;
  }
  EXPECT_NE(result.err.find("1 of 1 node(s) ok; succeeded"), std::string::npos) << result.err;
}

TEST_F(RunLocalCliTest, FailingRankFailsTheRunAndNamesIt) {
  ASSERT_TRUE(HaveTorch()) << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
  std::string script = Write("fail.py",
                             "import os, sys, time\n"
                             "if os.environ['RANK'] == '1':\n"
                             "    print('rank 1 gives up', flush=True); sys.exit(3)\n"
                             "time.sleep(60)\n");
  std::vector<std::string> args = Base(2);
  args.insert(args.end(), {"--torchrun", kTorchrun, "--python", "/usr/bin/python3", script});
  ProcessResult result = RunTopolaunch(args);
  EXPECT_EQ(result.exit_code, 1) << result.Describe();
  EXPECT_NE(result.err.find("torchrun's root cause: rank 1 (local rank 1) exit code 3"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("| 1: rank 1 gives up"), std::string::npos) << result.err;
  EXPECT_LT(result.seconds, 40);
  EXPECT_EQ(WaitUntilNoProcessMentions(script, milliseconds(5000)), std::vector<std::string>{});
}

TEST_F(RunLocalCliTest, InterruptStopsEverythingWithin5Seconds) {
  ASSERT_TRUE(HaveTorch()) << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
  std::string script = Write("sleep.py", "import time\nprint('READY', flush=True)\ntime.sleep(120)\n");
  ProcessSpec spec;
  spec.argv = {TopolaunchBinary()};
  std::vector<std::string> args = Base(2);
  args.insert(args.end(), {"--torchrun", kTorchrun, "--python", "/usr/bin/python3", script});
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  Result<std::unique_ptr<BackgroundProcess>> run = BackgroundProcess::Start(spec, dir_.File("run.log"));
  ASSERT_TRUE(run.ok()) << run.error().Message();
  ASSERT_TRUE((*run)->WaitForLog("[0] 0: READY", milliseconds(60'000)).ok()) << (*run)->ReadLog();
  auto sent = std::chrono::steady_clock::now();
  kill((*run)->pid(), SIGINT);
  while ((*run)->Running() && std::chrono::steady_clock::now() - sent < milliseconds(10'000)) std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE((*run)->Running());
  EXPECT_LT(std::chrono::steady_clock::now() - sent, milliseconds(5000));
  EXPECT_EQ(ProcessesMentioning(script), std::vector<std::string>{});
  EXPECT_NE((*run)->ReadLog().find("interrupted, every node stopped"), std::string::npos) << (*run)->ReadLog();
}

// --audit: the preflight runs the node checks of `audit --local`; a node
// with an error finding is not ready and nothing starts.
TEST_F(RunLocalCliTest, AuditInThePreflightRefusesASickNode) {
  ASSERT_TRUE(HaveTorch()) << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
  std::string script = Write("t.py", "print('hi')\n");
  FakeSysfs sick, healthy;
  SickNode(sick);
  HealthyNode(healthy);
  auto run = [&](const FakeSysfs& sysfs) {
    std::vector<std::string> args = Base(1);
    args.insert(args.end(), {"--torchrun", kTorchrun, "--python", "/usr/bin/python3", "--audit", "--audit-sysfs-root",
                             sysfs.root(), "--dry-run", script});
    return RunTopolaunch(args);
  };
  ProcessResult refused = run(sick);
  EXPECT_EQ(refused.exit_code, 3) << refused.Describe();
  EXPECT_NE(refused.err.find("audit: gpu_pcie_link: "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("0000:0a:00.0"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("nothing was started"), std::string::npos) << refused.err;
  ProcessResult fit = run(healthy);
  EXPECT_EQ(fit.exit_code, 0) << fit.Describe();
}

}  // namespace
}  // namespace topolaunch::testing
