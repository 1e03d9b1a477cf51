// The attempt loop with a recording fake pass: what each attempt is asked
// to run, what is said, waited and written, and the exit status.
#include "launch/restart_loop.h"

#include <map>

#include <gtest/gtest.h>

#include "rankmap/rankmap_test_util.h"
#include "support/fabric_generator.h"

namespace topolaunch {
namespace {

using std::chrono::milliseconds;

struct Recorder {
  std::vector<PassRequest> requests;
  std::vector<std::string> notes, printed, errors;
  std::vector<milliseconds> waits;
  std::map<std::string, std::string> files;
  bool stop_in_wait = false;
  RestartIo Io() {
    RestartIo io;
    io.note = [this](std::string_view t) { notes.emplace_back(t); };
    io.print = [this](std::string_view t) { printed.emplace_back(t); };
    io.report_error = [this](const Error& e) {
      errors.push_back(e.Message());
      return 3;
    };
    io.wait = [this](milliseconds w) {
      waits.push_back(w);
      return !stop_in_wait;
    };
    io.write_file = [this](const std::string& path, std::string_view text) -> Status {
      files[path] = std::string(text);
      return Ok{};
    };
    return io;
  }
  bool Noted(std::string_view text) const {
    for (const std::string& n : notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  }
};

// Two leaves of three: node01-03 on the first, node04-06 on the second.
std::shared_ptr<const Topology> TwoLeaves() {
  return std::make_shared<const Topology>(
      testing::TopologyOf(testing::TwoLevelFatTree({.leaves = 2, .hosts_per_leaf = 3, .spines = 1})));
}

PassResult Ran(int status, std::vector<std::string> order, std::vector<std::string> lost = {}) {
  PassResult r;
  r.status = status;
  r.ran = true;
  r.order = std::move(order);
  r.lost = std::move(lost);
  r.pool = {"node01", "node02", "node03", "node04", "node05", "node06"};
  r.topology = TwoLeaves();
  r.outcome = status == 0 ? "ok" : "failed";
  return r;
}

TEST(RestartLoop, AWorkerFailureRestartsOnTheSameNodes) {
  Recorder rec;
  std::vector<std::string> nodes = {"node01", "node02", "node04"};
  int status = RunAttempts({2, 1.5, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    return Ran(rec.requests.size() == 1 ? 1 : 0, req.hosts.value_or(nodes));
  }, rec.Io());
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rec.requests.size(), 2u);
  EXPECT_EQ(rec.requests[0].restart, 0);
  EXPECT_FALSE(rec.requests[0].hosts.has_value()) << "the first attempt chooses from the pool";
  EXPECT_EQ(rec.requests[1].restart, 1);
  EXPECT_EQ(rec.requests[1].hosts, nodes);
  EXPECT_EQ(rec.waits, std::vector<milliseconds>{milliseconds(1500)});
  EXPECT_TRUE(rec.Noted("restart 1 of 2 in 1.5 s, on the same nodes")) << rec.notes.front();
  ASSERT_EQ(rec.printed.size(), 1u);
  EXPECT_NE(rec.printed[0].find("attempts: 2"), std::string::npos) << rec.printed[0];
}

TEST(RestartLoop, ALostNodeIsReplacedByASpareOnItsLeafAndWrittenDown) {
  Recorder rec;
  int status = RunAttempts({1, 0, 0, "lost.txt"}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    return rec.requests.size() == 1 ? Ran(1, {"node01", "node02", "node04"}, {"node04"}) : Ran(0, *req.hosts);
  }, rec.Io());
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rec.requests.size(), 2u);
  EXPECT_EQ(rec.requests[1].hosts, (std::vector<std::string>{"node01", "node02", "node05"})) << "node05 shares node04's leaf";
  EXPECT_TRUE(rec.Noted("node04 lost: spare node05 takes its place"));
  EXPECT_EQ(rec.files["lost.txt"], "node04\n");
}

// Ranks per node that the first attempt took from the GPU counts stay for
// every restart: a node with a GPU fewer since is then not ready (and
// replaced), where a new count would fail the job.
TEST(RestartLoop, RanksTakenFromTheGpusStayForTheRestarts) {
  Recorder rec;
  int status = RunAttempts({2, 0, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    PassResult r = rec.requests.size() < 3 ? Ran(1, {"node01", "node02", "node04"}, {"node04"}) : Ran(0, *req.hosts);
    if (rec.requests.size() == 1) r.ranks_per_node = 8;
    return r;
  }, rec.Io());
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rec.requests.size(), 3u);
  EXPECT_FALSE(rec.requests[0].ranks_per_node.has_value());
  EXPECT_EQ(rec.requests[1].ranks_per_node, 8);
  EXPECT_EQ(rec.requests[2].ranks_per_node, 8);
}

TEST(RestartLoop, ASpareThatFailsItsPreflightIsReplacedAtOnce) {
  Recorder rec;
  int status = RunAttempts({1, 0, 0, "lost.txt"}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    if (rec.requests.size() == 1) return Ran(1, {"node01", "node02", "node04"}, {"node04"});
    if (rec.requests.size() == 2) {
      PassResult r = Ran(3, *req.hosts, {"node05"});
      r.ran = false;  // its preflight failed: nothing started
      return r;
    }
    return Ran(0, *req.hosts);
  }, rec.Io());
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rec.requests.size(), 3u);
  EXPECT_EQ(rec.requests[2].restart, 1) << "the same restart, with the next spare";
  EXPECT_EQ(rec.requests[2].hosts, (std::vector<std::string>{"node01", "node02", "node06"}));
  EXPECT_EQ(rec.waits.size(), 1u);
  EXPECT_EQ(rec.files["lost.txt"], "node04\nnode05\n");
}

TEST(RestartLoop, TheLastSpareFailingItsPreflightFailsTheJob) {
  Recorder rec;
  int status = RunAttempts({3, 0, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    std::vector<std::string> all_but_one = {"node01", "node02", "node03", "node04", "node05"};
    if (rec.requests.size() == 1) return Ran(1, all_but_one, {"node05"});
    PassResult r = Ran(3, *req.hosts, {"node06"});  // the only spare is not ready
    r.ran = false;
    return r;
  }, rec.Io());
  EXPECT_EQ(status, 1) << "the job failed (it ran); not 3, which says nothing started";
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_NE(rec.errors[0].find("node06 lost and no spare left"), std::string::npos) << rec.errors[0];
}

// A pool host the topology does not place (not on the fabric) would make
// the restart's plan fail: it is no spare unless hosts off the fabric may be
// planned.
TEST(RestartLoop, AHostOffTheFabricIsNoSpareUnlessItMayBePlanned) {
  for (bool allow_unknown : {false, true}) {
    SCOPED_TRACE(allow_unknown ? "allow_unknown" : "fabric hosts only");
    Recorder rec;
    std::vector<std::string> all = {"node01", "node02", "node03", "node04", "node05", "node06"};
    int status = RunAttempts({1, 0, 0, ""}, [&](const PassRequest& req) {
      rec.requests.push_back(req);
      PassResult r = rec.requests.size() == 1 ? Ran(1, all, {"node03"}) : Ran(0, *req.hosts);
      r.pool.push_back("offfabric1");
      r.allow_unknown = allow_unknown;
      return r;
    }, rec.Io());
    if (allow_unknown) {
      EXPECT_EQ(status, 0);
      ASSERT_EQ(rec.requests.size(), 2u);
      EXPECT_TRUE(rec.Noted("node03 lost: spare offfabric1 takes its place"));
    } else {
      EXPECT_EQ(status, 1);
      EXPECT_EQ(rec.requests.size(), 1u) << "no restart on a host the plan refuses";
      ASSERT_EQ(rec.errors.size(), 1u);
      EXPECT_NE(rec.errors[0].find("node03 lost and no spare left"), std::string::npos) << rec.errors[0];
    }
  }
}

TEST(RestartLoop, NoSpareLeftFailsNamingTheLostNodeUnlessMinNnodesAllows) {
  Recorder rec;
  auto all_busy = [&](const PassRequest& req) {
    rec.requests.push_back(req);
    std::vector<std::string> all = {"node01", "node02", "node03", "node04", "node05", "node06"};
    return rec.requests.size() == 1 ? Ran(1, all, {"node03"}) : Ran(0, *req.hosts);
  };
  EXPECT_EQ(RunAttempts({2, 0, 0, ""}, all_busy, rec.Io()), 1);
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_NE(rec.errors[0].find("node03 lost and no spare left"), std::string::npos) << rec.errors[0];
  EXPECT_NE(rec.errors[0].find("--min-nnodes"), std::string::npos);

  Recorder fewer;
  rec = fewer;
  EXPECT_EQ(RunAttempts({2, 0, 5, ""}, all_busy, rec.Io()), 0);
  ASSERT_EQ(rec.requests.size(), 2u);
  EXPECT_EQ(rec.requests[1].hosts->size(), 5u);
  EXPECT_TRUE(rec.Noted("going on with 5 node(s) (--min-nnodes 5); the world size changes"));
}

TEST(RestartLoop, UsedUpRestartsFailWithEveryAttemptListed) {
  Recorder rec;
  int status = RunAttempts({2, 0, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    PassResult r = Ran(1, {"node01"});
    r.outcome = "failed: node01: worker failed #" + std::to_string(rec.requests.size());
    return r;
  }, rec.Io());
  EXPECT_EQ(status, 1);
  EXPECT_EQ(rec.requests.size(), 3u);
  EXPECT_TRUE(rec.Noted("--max-restarts 2 used up"));
  ASSERT_EQ(rec.printed.size(), 1u);
  for (const char* each : {"attempts: 3", "worker failed #1", "worker failed #2", "worker failed #3", "restart 2"})
    EXPECT_NE(rec.printed[0].find(each), std::string::npos) << each << " in\n" << rec.printed[0];
}

TEST(RestartLoop, WithoutMaxRestartsOneAttemptAndNoList) {
  Recorder rec;
  EXPECT_EQ(RunAttempts({0, 3, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    return Ran(1, {"node01"});
  }, rec.Io()), 1);
  EXPECT_EQ(rec.requests.size(), 1u);
  EXPECT_TRUE(rec.printed.empty());
  EXPECT_TRUE(rec.waits.empty());
}

TEST(RestartLoop, AStopDuringTheDelayEndsWithNothingRunning) {
  Recorder rec;
  rec.stop_in_wait = true;
  int status = RunAttempts({3, 60, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    return Ran(1, {"node01"});
  }, rec.Io());
  EXPECT_EQ(status, 130);
  EXPECT_EQ(rec.requests.size(), 1u);
  EXPECT_TRUE(rec.Noted("interrupted during the restart delay"));
}

TEST(RestartLoop, APlanAgainIsNoAttempt) {
  Recorder rec;
  int status = RunAttempts({1, 0, 0, ""}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    if (rec.requests.size() == 1) {
      PassResult r;
      r.replan = Replan{Topology{}, {"node02", "node01"}};
      return r;
    }
    return Ran(0, *req.hosts);
  }, rec.Io());
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rec.requests.size(), 2u);
  EXPECT_EQ(rec.requests[1].restart, 0);
  EXPECT_NE(rec.requests[1].replan, nullptr);
  EXPECT_EQ(rec.requests[1].hosts, (std::vector<std::string>{"node02", "node01"}));
  EXPECT_TRUE(rec.waits.empty());
}

TEST(RestartLoop, NothingStartedEndsAtOnce) {
  Recorder rec;
  EXPECT_EQ(RunAttempts({5, 0, 0, "lost.txt"}, [&](const PassRequest& req) {
    rec.requests.push_back(req);
    PassResult r;
    r.status = 3;  // the first preflight failed: the user's to fix, not a restart's
    return r;
  }, rec.Io()), 3);
  EXPECT_EQ(rec.requests.size(), 1u);
  EXPECT_EQ(rec.files["lost.txt"], "") << "written, empty: no node was lost";
}

}  // namespace
}  // namespace topolaunch
