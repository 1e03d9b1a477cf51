// The ibsim harness itself: start-up, isolation, timeouts, the console, and
// OpenSM. Uses the smallest real dump (tests/data/ibnet), written by hand in
// the man page.
#include "support/ibsim_harness.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>

#include "discover/live_fabric_readers.h"
#include "support/test_paths.h"

namespace topolaunch::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ManPageDump() { return TestDataDir() + "/ibnet/doc-manpage-ibnetdiscover-2sw-4ca.ibnet"; }

// nullptr (with a failure recorded) when ibsim does not start.
std::unique_ptr<IbsimFabric> StartManPageFabric() {
  Result<std::unique_ptr<IbsimFabric>> sim = IbsimFabric::Start(ManPageDump());
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().Message());
  return sim.ok() ? std::move(sim).value() : nullptr;
}

int CountCas(const IbsimFabric& sim) {
  ProcessResult walk = sim.Run({"ibnetdiscover"});
  EXPECT_EQ(walk.exit_code, 0) << walk.Describe();
  return ReadIbnetdiscoverOutput(walk.out).Count("Ca");
}

TEST(IbsimFabric, TwoAtOnceAreIsolatedAndKilledOnDestruction) {
  std::unique_ptr<IbsimFabric> first = StartManPageFabric();
  ASSERT_TRUE(first);
  std::unique_ptr<IbsimFabric> second = StartManPageFabric();
  ASSERT_TRUE(second);
  EXPECT_NE(first->socket_name(), second->socket_name());
  EXPECT_NE(first->work_dir(), second->work_dir());
  EXPECT_NE(first->Log().find("Network simulator ready."), std::string::npos);
  EXPECT_EQ(CountCas(*first), 4);
  EXPECT_EQ(CountCas(*second), 4);
  pid_t pid = first->pid();
  ASSERT_EQ(kill(pid, 0), 0);
  first.reset();
  EXPECT_EQ(kill(pid, 0), -1) << "ibsim " << pid << " survived its IbsimFabric";
  EXPECT_EQ(CountCas(*second), 4);
}

TEST(IbsimFabric, ABadNetFileFailsStartWithIbsimsOwnWords) {
  TempDir dir;
  std::ofstream(dir.File("broken.net")) << "Switch 4 \"sw\"\n[1] \"nowhere\"[9]\n[x] garbage\n";
  struct Case {
    std::string netfile, ibsim_says;
  };
  const Case cases[] = {{dir.File("broken.net"), "parsing failed"}, {dir.File("absent.net"), "can't open"}};
  for (const Case& c : cases) {
    IbsimOptions options;
    options.startup_timeout = seconds(15);
    auto start = std::chrono::steady_clock::now();
    Result<std::unique_ptr<IbsimFabric>> sim = IbsimFabric::Start(c.netfile, options);
    ASSERT_FALSE(sim.ok()) << c.netfile;
    EXPECT_EQ(sim.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(sim.error().Message().find(c.netfile), std::string::npos) << sim.error().Message();
    EXPECT_NE(sim.error().Message().find(c.ibsim_says), std::string::npos) << sim.error().Message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  }
}

TEST(IbsimFabric, RunKillsACommandAtItsTimeLimit) {
  std::unique_ptr<IbsimFabric> sim = StartManPageFabric();
  ASSERT_TRUE(sim);
  ProcessResult slow = sim->Run({"sh", "-c", "sleep 30 & sleep 30"}, milliseconds(300));
  EXPECT_TRUE(slow.timed_out);
  EXPECT_LT(slow.seconds, 5);
  ProcessResult fine = sim->Run({"sh", "-c", "echo $IBSIM_SOCKNAME; echo err >&2; exit 7"});
  EXPECT_EQ(fine.exit_code, 7);
  EXPECT_EQ(fine.out, sim->socket_name() + "\n");
  EXPECT_EQ(fine.err, "err\n");
}

TEST(IbsimFabric, ConsoleUnlinkTakesACaOffTheFabric) {
  std::unique_ptr<IbsimFabric> sim = StartManPageFabric();
  ASSERT_TRUE(sim);
  ASSERT_EQ(CountCas(*sim), 4);
  Result<std::string> reply = sim->Console("Unlink \"H-0008f10403961354\"");
  ASSERT_TRUE(reply.ok()) << reply.error().Message();
  EXPECT_EQ(CountCas(*sim), 3) << "reply: " << *reply;
  Result<std::string> unknown = sim->Console("Frobnicate");
  ASSERT_TRUE(unknown.ok()) << unknown.error().Message();
  EXPECT_NE(unknown->find("unknown"), std::string::npos) << *unknown;
}

TEST(OpenSm, BringsEveryCabledPortToActiveWithLids) {
  std::unique_ptr<IbsimFabric> sim = StartManPageFabric();
  ASSERT_TRUE(sim);
  Result<std::unique_ptr<OpenSm>> sm = OpenSm::Start(*sim);
  ASSERT_TRUE(sm.ok()) << sm.error().Message();
  ProcessResult probe = sim->Run({LIVE_FABRIC_PROBE, "live"});
  ProbeOutput live = ReadProbeOutput(probe.out);
  ASSERT_TRUE(live.fabric) << probe.Describe();
  int cabled = 0;
  for (const FabricNode& node : live.fabric->nodes)
    for (const FabricPort& port : node.ports) {
      if (!port.remote) continue;
      ++cabled;
      EXPECT_EQ(port.state, "Active") << FormatGuid(node.guid) << "[" << port.number << "]";
      EXPECT_GT(port.lid, 0) << FormatGuid(node.guid) << "[" << port.number << "]";
    }
  EXPECT_GT(cabled, 0);
}

}  // namespace
}  // namespace topolaunch::testing
