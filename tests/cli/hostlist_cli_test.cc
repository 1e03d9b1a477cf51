// ExpandHostList / CompressHostList against the real `scontrol show
// hostnames` / `scontrol show hostlist` (Slurm's own parser), on a table of
// tricky expressions and on randomized host sets with a fixed seed.
#include <algorithm>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "support/slurm_harness.h"

namespace topolaunch::testing {
namespace {

using Names = std::vector<std::string>;

// What scontrol made of an expression: names, or that it refused it.
struct ScontrolAnswer {
  bool rejected = false;  // said "Invalid hostlist" or logged an error
  bool invalid = false;   // said "Invalid hostlist"
  Names names;
  std::string raw;
};

class HostlistVsScontrol : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scontrol_ = new Scontrol(); }
  static void TearDownTestSuite() {
    delete scontrol_;
    scontrol_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(scontrol_->available()) << "scontrol is not installed (bash tests/install_deps.sh test)";
  }

  static ScontrolAnswer Hostnames(const std::string& expression) {
    ProcessResult r = scontrol_->Run({"show", "hostnames", expression});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    ScontrolAnswer answer;
    answer.raw = r.out + r.err;
    // scontrol exits 0 either way; it says "Invalid hostlist" or logs
    // "error: _parse_single_range" when it refuses.
    answer.invalid = answer.raw.find("Invalid hostlist") != std::string::npos;
    answer.rejected = answer.invalid || r.err.find("error:") != std::string::npos;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) answer.names.push_back(line);
    return answer;
  }

  static std::string Hostlist(const std::string& expression) {
    ProcessResult r = scontrol_->Run({"show", "hostlist", expression});
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.err, "") << "for " << expression;
    std::string out = r.out;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  static Scontrol* scontrol_;
};

Scontrol* HostlistVsScontrol::scontrol_ = nullptr;

enum class Expect {
  kSame,      // scontrol and we agree: same names, or both refuse
  kWeReject,  // scontrol makes names of it; we refuse on purpose (see hostlist.cc)
};

struct Case {
  const char* expression;
  Expect expect;
};

const Case kCases[] = {
    {"node[01-10]", Expect::kSame},
    {"node[1-3,7]", Expect::kSame},
    {"a[1-2]b[3-4]", Expect::kSame},
    {"a[1-2]b[3-4]c[5-6]", Expect::kSame},
    {"a[1-2]b[3]c[4-5]d[6-7]", Expect::kSame},
    {"a[1-2].b[3]", Expect::kSame},
    {"rack1-node[1-2]", Expect::kSame},
    {"rack1-node[1-2]-ib", Expect::kSame},  // both refuse: text after the last ']'
    {"a[1-2]b", Expect::kSame},
    {"a,b,c", Expect::kSame},
    {"a b\tc", Expect::kSame},
    {" ,a,, b ,", Expect::kSame},
    {"n1,n1,n2", Expect::kSame},
    {"node[9-11]", Expect::kSame},
    {"node[08-10]", Expect::kSame},
    {"node[8-010]", Expect::kSame},
    {"node[001-3]", Expect::kSame},
    {"node[0-0],node[007]", Expect::kSame},
    {"node[1-]", Expect::kSame},
    {"n[3,1,2],n[1-3,2-4]", Expect::kSame},
    {"node[10-8]", Expect::kSame},
    {"node[]", Expect::kSame},
    {"node[1-2,]", Expect::kSame},
    {"node[,1]", Expect::kSame},
    {"node[a-b]", Expect::kSame},
    {"node[1--2]", Expect::kSame},
    {"node[-1]", Expect::kSame},
    {"node[0x1]", Expect::kSame},
    {"node[[1-2]]", Expect::kSame},
    {"node[1-2]]", Expect::kSame},
    {"n[1-65536]", Expect::kSame},
    {"n[1-65537]", Expect::kSame},
    {"n[1-999999999]", Expect::kSame},
    {"a[1-40000,1-40000]b[1]", Expect::kSame},
    {"[1-2],007", Expect::kSame},
    {"n[18446744073709551614]", Expect::kSame},
    {"gpu_a-1.ib,GPU-B[1-2]", Expect::kSame},
    {"", Expect::kSame},
    {"node[", Expect::kWeReject},
    {"node]", Expect::kWeReject},
    {"[abc", Expect::kWeReject},
    {"x]y[1]", Expect::kWeReject},
    {"n@1,n$1,n/1,n:1,n=1", Expect::kWeReject},
    {"n[ 1-2]", Expect::kWeReject},
    {"n[1a-2]", Expect::kWeReject},
    {"n[+1-2]", Expect::kWeReject},
    {"n[99999999999999999999]", Expect::kWeReject},
    {"a[x]b[1-2]c[1]", Expect::kWeReject},  // scontrol: nothing, silently
};

TEST_F(HostlistVsScontrol, ExpandsLikeShowHostnames) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.expression);
    ScontrolAnswer theirs = Hostnames(c.expression);
    Result<Names> ours = ExpandHostList(c.expression);
    if (c.expect == Expect::kWeReject) {
      EXPECT_FALSE(theirs.invalid) << "scontrol now refuses it too; make it kSame: " << theirs.raw;
      EXPECT_FALSE(ours.ok());
      continue;
    }
    ASSERT_EQ(ours.ok(), !theirs.rejected) << "scontrol: " << theirs.raw
                                           << (ours.ok() ? "" : "\nours: " + ours.error().Message());
    if (ours.ok()) {
      EXPECT_EQ(*ours, theirs.names);
    }
  }
}

TEST_F(HostlistVsScontrol, CompressesExpandedListsLikeShowHostlist) {
  for (const Case& c : kCases) {
    Result<Names> ours = ExpandHostList(c.expression);
    if (!ours.ok() || ours->empty()) continue;
    SCOPED_TRACE(c.expression);
    EXPECT_EQ(CompressHostList(*ours), Hostlist(c.expression));
  }
}

std::string Join(const Names& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

TEST_F(HostlistVsScontrol, CompressesNameListsLikeShowHostlist) {
  const Names kLists[] = {
      {"n3", "n1", "n2"},   {"n1", "n1", "n2"},       {"n01", "n1"},          {"n8", "n9", "n010"},
      {"n99", "n100"},      {"n099", "n100"},         {"n0099", "n100"},      {"n9", "n010"},
      {"a", "a", "b"},      {"n", "n1", "n2"},        {"x1", "y1", "x2"},     {"1", "2", "3"},
      {"01", "02", "3"},    {"n1a", "n2a"},           {"n1x2", "n1x3"},       {"n1-2", "n1-3", "n1"},
      {"n1.ib", "n2.ib"},   {"node001", "node002", "node004", "gpu7", "gpu8"},
  };
  for (const Names& list : kLists) {
    SCOPED_TRACE(Join(list));
    EXPECT_EQ(CompressHostList(list), Hostlist(Join(list)));
  }
}

// Random host names shaped like real ones: a few prefixes, zero padding of
// varying width, runs, gaps, shuffles, duplicates and names without digits.
Names RandomHosts(std::mt19937& rng) {
  static const char* kPrefixes[] = {"n", "node", "gpu-a", "rack1-n", "x.y", "", "a_b", "c1x"};
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  Names hosts;
  int runs = 1 + pick(5);
  for (int r = 0; r < runs; ++r) {
    std::string prefix = kPrefixes[pick(8)];
    if (pick(10) == 0) {
      hosts.push_back(prefix.empty() ? "login" : prefix);
      continue;
    }
    int width = 1 + pick(4);
    int start = pick(3) == 0 ? pick(1200) : pick(20);
    int length = 1 + pick(12);
    for (int i = 0; i < length; ++i) {
      int number = start + i + (pick(6) == 0 ? pick(3) : 0);
      int w = pick(8) == 0 ? 1 + pick(4) : width;
      hosts.push_back(prefix + fmt::format("{:0{}}", number, w));
    }
  }
  if (pick(3) == 0) std::shuffle(hosts.begin(), hosts.end(), rng);
  if (pick(4) == 0) hosts.push_back(hosts[static_cast<size_t>(pick(static_cast<int>(hosts.size())))]);
  return hosts;
}

TEST_F(HostlistVsScontrol, RandomizedDifferential) {
  std::mt19937 rng(20240611);
  for (int sample = 0; sample < 300; ++sample) {
    Names hosts = RandomHosts(rng);
    SCOPED_TRACE(fmt::format("sample {}: {}", sample, Join(hosts)));
    std::string ours = CompressHostList(hosts);
    std::string theirs = Hostlist(Join(hosts));
    ASSERT_EQ(ours, theirs);
    Result<Names> back = ExpandHostList(ours);
    ASSERT_TRUE(back.ok()) << back.error().Message();
    EXPECT_EQ(*back, hosts);
    ScontrolAnswer slurm_back = Hostnames(ours);
    ASSERT_FALSE(slurm_back.rejected) << slurm_back.raw;
    EXPECT_EQ(slurm_back.names, hosts);
  }
}

}  // namespace
}  // namespace topolaunch::testing
