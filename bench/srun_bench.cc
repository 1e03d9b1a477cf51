// srun benchmark (`run --launcher srun`): prints figures, asserts nothing.
//
// A real slurmctld and one slurmd per node on a three-node NetnsTestbed
// (root only). In each run one `salloc -N3` holds the nodes while a shell
// times, in an order that rotates from run to run:
//   srun true      `srun -N3 -n3 true`: Slurm's own floor for a step on every node;
//   run srun       `topolaunch run --launcher srun --dry-run`: every node's agent
//                  started as a task of one step and connected back, its preflight
//                  answered, the plan, the dry-run print, the step stopped (a run
//                  that succeeds: exit 0);
//   run ssh        the same with `--launcher ssh` to the same nodes;
//   scontrol       `scontrol show config`: what `run --launcher srun` pays
//                  to read SrunPortRange (part of the run srun row).
// The ratios are to `srun true` and between the two launchers.
//
// Usage: srun_bench [RUNS]   (default 5)
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "bench_stats.h"

#include "launch/command.h"
#include "support/netns_testbed.h"
#include "support/slurm_cluster.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

using namespace topolaunch;
using namespace topolaunch::testing;

using topolaunch::bench::Median;

namespace {

constexpr int kNodes = 3;
const std::vector<std::string> kRows = {"srun true", "run srun", "run ssh", "scontrol"};

// `run` as the rows start it; the script only has to exist.
std::string RunCommand(const std::string& launcher, const std::string& script) {
  return ShellJoin({TopolaunchBinary(), "run", "--launcher", launcher, "--no-gpus", "--nproc-per-node", "1", "--dry-run",
                    "--torchrun", "/usr/bin/torchrun", "--python", "/usr/bin/python3", script});
}

// One allocation, every row once from `first` on: "ROW SECONDS" lines.
std::string TimingScript(size_t first, const std::string& script) {
  std::map<std::string, std::string> commands = {{"srun true", "srun -N3 -n3 true"},
                                                 {"scontrol", "scontrol show config >/dev/null"},
                                                 {"run srun", RunCommand("srun", script) + " >/dev/null 2>&1"},
                                                 {"run ssh", RunCommand("ssh", script) + " >/dev/null 2>&1"}};
  std::string text = "set -u\n";
  for (size_t k = 0; k < kRows.size(); ++k) {
    const std::string& row = kRows[(first + k) % kRows.size()];
    text += fmt::format("t0=$(date +%s%N); {} || echo 'failed {}'; t1=$(date +%s%N); echo \"{} $(( (t1 - t0) / 1000 ))\"\n",
                        commands[row], row, row);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  if (auto why = NetnsTestbed::Unavailable()) {
    fmt::print("srun_bench: {}; skipped\n", *why);
    return 0;
  }
  if (std::string missing = SlurmCluster::Missing(); !missing.empty()) {
    fmt::print("srun_bench: {}; skipped\n", missing);
    return 0;
  }
  auto testbed = NetnsTestbed::Start(kNodes);
  if (!testbed.ok()) return fmt::print(stderr, "testbed: {}\n", testbed.error().Message()), 1;
  auto slurm = SlurmCluster::Start(**testbed);
  if (!slurm.ok()) return fmt::print(stderr, "slurm: {}\n", slurm.error().Message()), 1;
  TempDir dir;
  std::string script = dir.File("job.py");
  std::ofstream(script) << "print('hello')\n";
  std::map<std::string, std::vector<double>> seconds;
  for (int run = 0; run < runs; ++run) {
    std::ofstream(dir.File("time.sh")) << TimingScript(static_cast<size_t>(run), script);
    ProcessSpec spec = (*slurm)->InHead({"salloc", fmt::format("-N{}", kNodes), "bash", dir.File("time.sh")});
    spec.cwd = dir.path();
    spec.timeout = std::chrono::seconds(300);
    ProcessResult r = RunProcess(spec);
    if (r.exit_code != 0 || r.out.find("failed") != std::string::npos)
      return fmt::print(stderr, "run {}: {}\n{}\n", run + 1, r.Describe(), r.out), 1;
    std::istringstream lines(r.out);
    std::string line_out = fmt::format("run {}:", run + 1);
    for (std::string line; std::getline(lines, line);) {
      size_t space = line.rfind(' ');
      std::string row = line.substr(0, space);
      double s = std::atof(line.c_str() + space + 1) / 1e6;
      seconds[row].push_back(s);
      line_out += fmt::format(" {} {:.3f} s;", row, s);
    }
    fmt::print("{}\n", line_out);
    std::fflush(stdout);
  }
  double floor = Median(seconds["srun true"]), srun = Median(seconds["run srun"]), ssh = Median(seconds["run ssh"]);
  fmt::print("median of {} runs, {} nodes (network namespaces, one slurmd each):\n", runs, kNodes);
  fmt::print("  {:<60} {:6.3f} s\n", "srun -N3 -n3 true (one step on every node)", floor);
  fmt::print("  {:<60} {:6.3f} s  ratio to srun true {:.2f}\n", "topolaunch run --launcher srun --dry-run (agents answering)",
             srun, srun / floor);
  fmt::print("  {:<60} {:6.3f} s  ratio to srun true {:.2f}, to the srun path {:.2f}\n",
             "topolaunch run --launcher ssh --dry-run", ssh, ssh / floor, ssh / srun);
  fmt::print("  {:<60} {:6.3f} s  (within the srun path)\n", "scontrol show config (SrunPortRange)",
             Median(seconds["scontrol"]));
  return 0;
}
