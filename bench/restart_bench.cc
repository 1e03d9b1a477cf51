// Restart benchmark (`run --max-restarts`): prints figures, asserts nothing.
//
// Four namespace nodes with sshd (NetnsTestbed, root only), `run --hosts
// node[1-4] --nnodes 3 --max-restarts 1 --restart-delay 0 --heartbeat 1`:
// node4 is the spare. Once the three workers run, node3 is lost, in one of
// two ways (alternating from run to run):
//   killed  every process of node3 at once (its connection closes at once);
//   cut     node3's link down (nothing closes: `run` counts three missed
//           heartbeats, 1 s apart, through SSH keepalives and TCP's user timeout).
// Timed from the loss: until `run` says it restarts (the loss detected,
// every other node stopped, the summary printed: "detect + stop"), then
// until the second attempt's three workers all run (preflight, plan,
// torchrun: "start"). The cut row's extra time over the killed row is the
// detection itself.
//
// Usage: restart_bench [RUNS]   (default 3)
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "bench_stats.h"

#include "support/netns_testbed.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

using namespace topolaunch;
using namespace topolaunch::testing;
using topolaunch::bench::Median;
using Clock = std::chrono::system_clock;

namespace {

// Attempt 0: a marker, then sleep. Attempt 1: the time it runs, then exit.
constexpr const char* kScript = R"PY(import os, time
d = os.path.dirname(os.path.abspath(__file__))
if os.environ["TOPOLAUNCH_RESTART_COUNT"] == "0":
    open(os.path.join(d, "ready-" + os.environ["RANK"]), "w").close()
    time.sleep(300)
with open(os.path.join(d, "second-" + os.environ["RANK"]), "w") as f:
    f.write(str(time.time()))
)PY";

double Now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

size_t Count(const std::string& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().filename().string().starts_with(prefix);
  return n;
}

bool WaitFor(const std::function<bool()>& done, double seconds) {
  double until = Now() + seconds;
  while (!done()) {
    if (Now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

struct Times {
  double detect_stop = 0, start = 0;
};

// One run of one row; nullopt (with a message) when it did not go through.
std::optional<Times> RunOnce(NetnsTestbed& testbed, bool cut, int port) {
  TempDir dir;
  std::string script = dir.File("job.py");
  std::ofstream(script) << kScript;
  ProcessSpec spec = testbed.InHead({TopolaunchBinary(), "run", "--hosts", "node1,node2,node3,node4", "--nnodes", "3",
                                     "--max-restarts", "1", "--restart-delay", "0", "--heartbeat", "1", "--grace", "1",
                                     "--nproc-per-node", "1", "--no-gpus", "--master-port", std::to_string(port),
                                     "--torchrun", "/usr/bin/torchrun --redirects 9:0 --tee 9:0", "--python",
                                     "/usr/bin/python3", script});
  spec.timeout = std::chrono::seconds(180);
  Result<std::unique_ptr<BackgroundProcess>> run = BackgroundProcess::Start(spec, dir.File("run.log"));
  if (!run.ok()) return fmt::print(stderr, "run: {}\n", run.error().Message()), std::nullopt;
  if (!WaitFor([&] { return Count(dir.path(), "ready-") == 3; }, 90))
    return fmt::print(stderr, "workers did not start:\n{}\n", (*run)->ReadLog()), std::nullopt;
  ProcessSpec link{{"ip", "-n", testbed.NodeNamespace(3), "link", "set", "eth0", "down"}, {}, "", std::chrono::seconds(10)};
  double lost = Now();
  if (cut) RunProcess(link);
  else testbed.StopNode(3);
  bool restarting = WaitFor([&] { return (*run)->ReadLog().find("restart 1 of 1") != std::string::npos; }, 90);
  double restart = Now();
  bool second = restarting && WaitFor([&] { return Count(dir.path(), "second-") == 3; }, 90);
  WaitFor([&] { return !(*run)->Running(); }, 30);
  if (cut) link.argv.back() = "up", RunProcess(link);
  else (void)testbed.RestartNode(3);
  if (!second) return fmt::print(stderr, "no second attempt:\n{}\n", (*run)->ReadLog()), std::nullopt;
  double running = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().starts_with("second-")) running = std::max(running, std::stod(ReadFile(e.path())));
  return Times{restart - lost, running - restart};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  if (auto why = NetnsTestbed::Unavailable()) return fmt::print("restart_bench: skipped: {}\n", *why), 0;
  auto testbed = NetnsTestbed::Start(4);
  if (!testbed.ok()) return fmt::print(stderr, "restart_bench: {}\n", testbed.error().Message()), 1;
  std::map<bool, std::vector<double>> detect_stop, start;
  for (int r = 0; r < runs; ++r)
    for (bool cut : {r % 2 == 1, r % 2 == 0})
      if (std::optional<Times> t = RunOnce(**testbed, cut, 29700 + 2 * r + cut)) {
        detect_stop[cut].push_back(t->detect_stop);
        start[cut].push_back(t->start);
      }
  fmt::print("restart after a lost node, 3 of 4 namespace nodes (node4 the spare), --heartbeat 1, medians of {} run(s):\n", runs);
  fmt::print("  {:<8} {:>14} {:>10} {:>10}\n", "loss", "detect + stop", "start", "total");
  for (bool cut : {false, true}) {
    if (detect_stop[cut].empty()) continue;
    double d = Median(detect_stop[cut]), s = Median(start[cut]);
    fmt::print("  {:<8} {:>12.2f} s {:>8.2f} s {:>8.2f} s\n", cut ? "cut" : "killed", d, s, d + s);
  }
  if (!detect_stop[false].empty() && !detect_stop[true].empty())
    fmt::print("  detection of a cut node (cut minus killed): {:.2f} s (three 1 s heartbeats)\n",
               Median(detect_stop[true]) - Median(detect_stop[false]));
  return 0;
}
