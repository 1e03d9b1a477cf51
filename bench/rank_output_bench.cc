// Rank output benchmark: 8 ranks printing as fast as they can for a while,
// lines per second delivered whole by `topolaunch run` (each rank on its own
// connection to the agent, labelled) against the same script under plain
// torchrun writing to a file (the ranks sharing its stdout), in the same
// run, alternating. Prints figures, asserts nothing.
//
// The ranks print for a fixed time, so a slower reader means fewer lines
// printed (print blocks on a full pipe or socket): lines per second is
// the throughput. "whole" counts lines that arrived exactly as printed: under plain
// torchrun two ranks' print() calls can mix on one line (PYTHONUNBUFFERED
// writes text and newline apart), which this counts as broken.
//
// Usage: rank_output_bench [SECONDS [RUNS]]   (default 10 1)
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_process.h"
#include "bench_stats.h"
#include "support/test_paths.h"

namespace topolaunch::bench {
namespace {

constexpr int kRanks = 8;
constexpr const char* kTorchrun = "/usr/bin/torchrun";
constexpr const char* kPython = "/usr/bin/python3";

// Each rank prints "@f RANK yyy..." lines until its time is up.
constexpr const char* kFlood = R"PY(import os, sys, time
rank = os.environ["RANK"]
end = time.monotonic() + float(sys.argv[1])
line = "@f " + rank + " " + "y" * 60
while time.monotonic() < end:
    for _ in range(100):
        print(line)
)PY";

struct Figures {
  double wall = 0, cpu = 0;
  long whole = 0, broken = 0;
  int status = -1;
};

// Runs `argv` with stdout into `out_path`; counts the flood's lines there.
Figures Measure(const std::vector<std::string>& argv, const std::string& out_path) {
  ProcessFigures run = MeasureProcess(argv, out_path, {{"PYTHONUNBUFFERED", "1"}});  // as `run` sets it for its ranks
  Figures f;
  f.wall = run.wall, f.cpu = run.cpu, f.status = run.status;
  std::ifstream in(out_path);
  std::string ys(60, 'y');
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("@f ");
    if (at == std::string::npos) continue;
    // Whole: one "@f", its rank, the 60 y's, nothing else after them.
    size_t digits = line.find_first_not_of("0123456789", at + 3);
    bool whole = digits != std::string::npos && digits > at + 3 && line.compare(digits, std::string::npos, " " + ys) == 0;
    ++(whole ? f.whole : f.broken);
  }
  unlink(out_path.c_str());
  return f;
}

}  // namespace
}  // namespace topolaunch::bench

int main(int argc, char** argv) {
  using namespace topolaunch::bench;
  double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  int runs = argc > 2 ? std::atoi(argv[2]) : 1;
  if (access(kTorchrun, X_OK) != 0) {
    fmt::print("rank_output_bench: {} not found (bash tests/install_deps.sh test)\n", kTorchrun);
    return 0;
  }
  topolaunch::testing::TempDir dir;
  std::string script = dir.File("flood.py");
  std::ofstream(script) << kFlood;
  std::string duration = fmt::format("{}", seconds);
  // Debian's torch 1.13 on Python 3.11 needs --redirects 9:0 --tee 9:0 (TESTBED.md); they redirect nothing.
  std::string torchrun_words = fmt::format("{} --redirects 9:0 --tee 9:0", kTorchrun);
  std::vector<std::pair<std::string, std::vector<std::string>>> sides = {
      {"topolaunch run (labelled)",
       {topolaunch::testing::TopolaunchBinary(), "run", "--nproc-per-node", std::to_string(kRanks), "--no-gpus", "--master-port",
        "29591", "--torchrun", torchrun_words, "--python", kPython, script, duration}},
      {"torchrun > file",
       {kTorchrun, "--redirects", "9:0", "--tee", "9:0", "--nproc_per_node", std::to_string(kRanks), "--master_port", "29592",
        "--no_python", kPython, script, duration}},
  };
  std::vector<std::vector<Figures>> all(sides.size());
  for (int run = 0; run < runs; ++run)
    for (size_t s = 0; s < sides.size(); ++s) all[s].push_back(Measure(sides[s].second, dir.File("out.txt")));
  fmt::print("rank_output_bench: {} ranks printing for {} s, {} run(s), medians; CPU is user+sys of the whole tree\n", kRanks,
             seconds, runs);
  fmt::print("{:<28} {:>8} {:>8} {:>12} {:>12} {:>10}\n", "who", "wall s", "cpu s", "whole lines", "lines/s", "broken");
  std::vector<double> rates, all_rates;
  for (size_t s = 0; s < sides.size(); ++s) {
    std::vector<double> wall, cpu, whole, broken;
    int status = 0;
    for (const Figures& f : all[s]) {
      wall.push_back(f.wall), cpu.push_back(f.cpu), status |= f.status;
      whole.push_back(static_cast<double>(f.whole)), broken.push_back(static_cast<double>(f.broken));
    }
    rates.push_back(Median(whole) / seconds);
    all_rates.push_back((Median(whole) + Median(broken)) / seconds);
    fmt::print("{:<28} {:>8.2f} {:>8.2f} {:>12.0f} {:>12.0f} {:>10.0f}{}\n", sides[s].first, Median(wall), Median(cpu), Median(whole),
               rates.back(), Median(broken), status ? fmt::format("  (exit {})", status) : "");
  }
  if (rates[1] > 0) fmt::print("ratio topolaunch/torchrun, whole lines per second: {:.2f}\n", rates[0] / rates[1]);
  if (all_rates[1] > 0)
    fmt::print("ratio topolaunch/torchrun, all lines per second (broken ones too): {:.2f}\n", all_rates[0] / all_rates[1]);
  return 0;
}
