// What the `run` tests on a NetnsTestbed share: the suite's fabric (ibsim,
// read by `discover --fabric live`), markers the workers leave, the job's
// processes left on the nodes, and `run`'s own PID.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"
#include "support/netns_testbed.h"
#include "support/proc_scan.h"

namespace topolaunch::testing {

/// sha256 of `text` as hex, through a file: the text must not appear on a
/// command line, ours included.
inline std::string Sha256Hex(const std::string& text) {
  TempDir dir;
  std::ofstream(dir.File("text"), std::ios::binary) << text;
  return RunProcess(ProcessSpec{{"sha256sum", dir.File("text")}, {}, "", std::chrono::seconds(10)}).out.substr(0, 64);
}

/// A two-leaf, one-spine fabric of four hosts under ibsim, the generator's
/// node01..node04 renamed by `names` (in cabling order: the first two on
/// the first leaf), walked into `topology_path`. Returns "" or what went
/// wrong; `unavailable` tells a missing ibsim (skip) from a failure.
inline std::string WriteFourHostTopology(const TempDir& dir, const std::vector<std::string>& names,
                                         const std::string& topology_path, bool& unavailable) {
  FatTreeSpec spec;
  spec.leaves = 2;
  spec.hosts_per_leaf = 2;
  spec.spines = 1;
  std::string netfile = TwoLevelFatTree(spec).netfile;
  for (size_t k = 0; k < names.size(); ++k) {
    std::string from = fmt::format("\"node{:02}", k + 1), to = "\"" + names[k];
    for (size_t at; (at = netfile.find(from)) != std::string::npos;) netfile.replace(at, from.size(), to);
  }
  std::ofstream(dir.File("net")) << netfile;
  auto sim = IbsimFabric::Start(dir.File("net"));
  unavailable = !sim.ok() && sim.error().code == ErrorCode::kUnavailable;
  if (!sim.ok()) return "ibsim: " + sim.error().Message();
  ProcessResult live = (*sim)->Run({TopolaunchBinary(), "discover", "--fabric", "live", "--no-layout", "-o", topology_path});
  return live.exit_code == 0 ? "" : "discover --fabric live: " + live.Describe();
}

/// How many `ready-*` (or `prefix`*) marker files the workers left in `dir`.
inline size_t CountReadyMarkers(const std::string& dir, const std::string& prefix = "ready-") {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    n += entry.path().filename().string().starts_with(prefix) ? 1 : 0;
  return n;
}

/// "node2 pid 123: torchrun ..." for every process of a job (the agent,
/// torchrun, `bind`, workers: anything naming topolaunch, torchrun or the
/// job's folder `job_dir`) still running in a node's namespace.
inline std::vector<std::string> JobProcessesOnNodes(const NetnsTestbed& testbed, const std::string& job_dir) {
  std::vector<std::string> found;
  for (int i = 1; i <= testbed.nodes(); ++i)
    for (pid_t pid : testbed.PidsInNode(i)) {
      std::string line = fmt::format("{}", fmt::join(Cmdline(pid), " "));
      if (line.find(TopolaunchBinary()) != std::string::npos || line.find("torchrun") != std::string::npos ||
          line.find(job_dir) != std::string::npos)
        found.push_back(fmt::format("node{} pid {}: {}", i, pid, line));
    }
  return found;
}

/// Whether every process of the job in `job_dir` is gone from the nodes
/// within `limit`; the failure lists what is still running.
inline ::testing::AssertionResult NothingLeftWithin(const NetnsTestbed& testbed, const std::string& job_dir,
                                                    std::chrono::milliseconds limit) {
  std::vector<std::string> left;
  if (WaitUntil([&] { return (left = JobProcessesOnNodes(testbed, job_dir)).empty(); }, limit))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "still running:\n" << fmt::format("{}", fmt::join(left, "\n"));
}

/// `topolaunch run`'s own PID for a job of `script`, found by its command line.
inline std::optional<pid_t> FindRunProcess(const std::string& script) {
  for (pid_t pid : AllPids()) {
    std::vector<std::string> args = Cmdline(pid);
    if (args.size() > 2 && args[0] == TopolaunchBinary() && args[1] == "run" && std::find(args.begin(), args.end(), script) != args.end())
      return pid;
  }
  return std::nullopt;
}

}  // namespace topolaunch::testing
