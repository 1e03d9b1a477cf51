// AssembleTopology: the fabric and the layouts load at the same time, and
// what comes out is as if they had loaded one after the other.
#include "discover/assemble_topology.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace topolaunch {
namespace {

using namespace std::chrono_literals;

// A walk that ends only once a layout has started loading (or fails after
// `patience`): AssembleTopology must run the two at once.
class WalkWaitingForALayout : public FabricSource {
 public:
  WalkWaitingForALayout(std::shared_future<void> layout_started, std::chrono::milliseconds patience)
      : layout_started_(std::move(layout_started)), patience_(patience) {}
  Result<Fabric> LoadFabric() override {
    if (layout_started_.wait_for(patience_) != std::future_status::ready)
      return Error(ErrorCode::kTimeout, "walk", "no layout started loading while the fabric was walked");
    Fabric fabric;
    fabric.source = "test-walk";
    return fabric;
  }

 private:
  std::shared_future<void> layout_started_;
  std::chrono::milliseconds patience_;
};

class FailingWalk : public FabricSource {
 public:
  Result<Fabric> LoadFabric() override { return Error(ErrorCode::kUnavailable, "umad", "no HCA"); }
};

class CountedLayout : public HostLayoutSource {
 public:
  CountedLayout(std::string hostname, std::atomic<int>& loads, std::promise<void>* started = nullptr)
      : hostname_(std::move(hostname)), loads_(loads), started_(started) {}
  Result<HostLayout> LoadLayout() override {
    ++loads_;
    if (started_) started_->set_value();
    if (hostname_.empty()) return Error(ErrorCode::kBadInput, "bad.xml", "damaged");
    HostLayout layout;
    layout.hostname = hostname_;
    layout.cores = 4;
    return layout;
  }

 private:
  std::string hostname_;
  std::atomic<int>& loads_;
  std::promise<void>* started_;
};

TEST(AssembleTopology, TheLayoutsLoadWhileTheFabricIsWalked) {
  std::promise<void> started;
  std::atomic<int> loads{0};
  CountedLayout layout("node1", loads, &started);
  WalkWaitingForALayout walk(started.get_future().share(), 20s);
  auto t0 = std::chrono::steady_clock::now();
  Result<Topology> topology = AssembleTopology(&walk, {}, {{"", "fallback", &layout}}, {});
  ASSERT_TRUE(topology.ok()) << topology.error().Message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_EQ(topology->generated.fabric_source, "test-walk");
  EXPECT_EQ(loads, 1);
  const TopologyHost* host = topology->FindHost("node1");
  ASSERT_NE(host, nullptr);
  ASSERT_TRUE(host->layout.has_value());
  EXPECT_EQ(host->layout->cores, 4);
}

TEST(AssembleTopology, AFailedWalkIsTheAnswerAndLeavesNothingRunning) {
  std::atomic<int> loads{0};
  std::vector<std::unique_ptr<CountedLayout>> sources;
  std::vector<LayoutInput> inputs;
  for (int i = 0; i < 50; ++i) {
    sources.push_back(std::make_unique<CountedLayout>("node" + std::to_string(i), loads));
    inputs.push_back({"", "", sources.back().get()});
  }
  FailingWalk walk;
  Result<Topology> topology = AssembleTopology(&walk, {}, inputs, {});
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.error().code, ErrorCode::kUnavailable);
  // The loading has ended by the time the call returns (the sources may go
  // away): the count stays where it is.
  int after = loads;
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(loads, after);
  EXPECT_LE(after, 50);
}

TEST(AssembleTopology, EveryBadLayoutIsNamedInTheOrderGiven) {
  std::atomic<int> loads{0};
  CountedLayout good("node1", loads), bad1("", loads), bad2("", loads);
  Result<Topology> topology = AssembleTopology(nullptr, {}, {{"", "a", &bad1}, {"", "b", &good}, {"", "c", &bad2}}, {});
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(topology.error().problems.size(), 2u);
}

}  // namespace
}  // namespace topolaunch
