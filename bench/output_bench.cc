// Output benchmark (`run` under maximal output): prints figures, asserts nothing.
//
// One node on this machine (the local executor, the real agent), the job a
// shell script in torchrun's place that writes as fast as it can, our
// stdout to /dev/null. Per case: wall time, CPU (user+sys of the whole
// tree: `run`, the agent, the job) and the peak resident set of any process
// in it (wait4's ru_maxrss, which covers every descendant waited for).
// Side by side in the same run, alternating: `pdsh -R exec -w localhost`
// (the peer: it prefixes every line with the host, as we do) and the bare
// job into /dev/null (the floor).
//   lines      BYTES of 120-byte lines
//   long line  BYTES without a newline, then one short line
//
// Usage: output_bench [MEGABYTES [RUNS]]   (default 400 3)
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_process.h"
#include "bench_stats.h"
#include "support/test_paths.h"

namespace topolaunch::bench {
namespace {

std::string WriteScript(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

}  // namespace
}  // namespace topolaunch::bench

int main(int argc, char** argv) {
  using namespace topolaunch::bench;
  long megabytes = argc > 1 ? std::atol(argv[1]) : 400;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  long bytes = megabytes * 1000 * 1000;
  topolaunch::testing::TempDir dir;
  struct Case {
    std::string name, script;
  };
  std::vector<Case> cases = {
      {"lines", WriteScript(dir.File("lines.sh"),
                            fmt::format("yes \"$(printf '%0119d' 0)\" | head -c {}\n", bytes))},
      {"long line", WriteScript(dir.File("long.sh"),
                                fmt::format("head -c {} /dev/zero | tr '\\0' x; echo; echo after\n", bytes))},
  };
  std::string topolaunch = topolaunch::testing::TopolaunchBinary();
  std::string script = WriteScript(dir.File("t.py"), "");
  bool have_pdsh = access("/usr/bin/pdsh", X_OK) == 0;
  fmt::print("output_bench: {} MB per case, {} run(s), medians; CPU is user+sys of the whole process tree\n", megabytes, runs);
  fmt::print("{:<10} {:<28} {:>8} {:>8} {:>9} {:>10}\n", "case", "who", "wall s", "cpu s", "peak MiB", "MB/s");
  for (const Case& c : cases) {
    std::vector<std::pair<std::string, std::vector<std::string>>> sides = {
        {"topolaunch run (local agent)",
         {topolaunch, "run", "--nproc-per-node", "1", "--no-gpus", "--torchrun", "sh " + c.script, "--python", "sh", script}},
        {"bare job > /dev/null", {"sh", c.script}},
    };
    if (have_pdsh) sides.push_back({"pdsh -R exec -w localhost", {"pdsh", "-R", "exec", "-w", "localhost", "sh", c.script}});
    std::vector<std::vector<ProcessFigures>> all(sides.size());
    for (int run = 0; run < runs; ++run)
      for (size_t s = 0; s < sides.size(); ++s) all[s].push_back(MeasureProcess(sides[s].second));
    for (size_t s = 0; s < sides.size(); ++s) {
      std::vector<double> wall, cpu, rss;
      int status = 0;
      for (const ProcessFigures& f : all[s]) wall.push_back(f.wall), cpu.push_back(f.cpu), rss.push_back(f.max_rss_mib), status |= f.status;
      fmt::print("{:<10} {:<28} {:>8.2f} {:>8.2f} {:>9.1f} {:>10.0f}{}\n", c.name, sides[s].first, Median(wall), Median(cpu),
                 Median(rss), static_cast<double>(megabytes) / Median(wall), status ? fmt::format("  (exit {})", status) : "");
    }
  }
  if (!have_pdsh) fmt::print("pdsh not installed (bash tests/install_deps.sh bench): no peer figures\n");
  return 0;
}
