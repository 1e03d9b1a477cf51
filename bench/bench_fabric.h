// The fabric the fabric benchmarks share: the 4,096-host two-level
// fat tree (128 leaves x 32 hosts, 32 spines) running in ibsim.
#pragma once

#include <chrono>
#include <fstream>
#include <memory>

#include "support/fabric_generator.h"
#include "support/ibsim_harness.h"

namespace topolaunch::bench {

struct BenchFabric {
  testing::GeneratedFabric fabric;
  std::unique_ptr<testing::TempDir> dir;  ///< the net file; room for outputs
  std::unique_ptr<testing::IbsimFabric> sim;
};

/// Generates the tree and starts ibsim on it with large enough tables.
inline Result<BenchFabric> StartBenchFatTree() {
  testing::FatTreeSpec spec;
  spec.leaves = 128;
  spec.hosts_per_leaf = 32;
  spec.spines = 32;
  BenchFabric b{testing::TwoLevelFatTree(spec), std::make_unique<testing::TempDir>(), nullptr};
  std::ofstream(b.dir->File("net")) << b.fabric.netfile;
  testing::IbsimOptions options;
  options.limits = testing::IbsimLimitsFor(b.fabric);
  options.startup_timeout = std::chrono::seconds(120);
  Result<std::unique_ptr<testing::IbsimFabric>> sim = testing::IbsimFabric::Start(b.dir->File("net"), options);
  if (!sim.ok()) return sim.take_error();
  b.sim = std::move(sim).value();
  return b;
}

}  // namespace topolaunch::bench
