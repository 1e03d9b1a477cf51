// `topolaunch run` with real torchrun on this machine: every rank's lines
// arrive whole, once, in order, labelled with the rank (`HOST[0] 3: text`),
// however the ranks' writes interleave; --ranks-output and --log-dir choose
// where they go; a 1 MiB line arrives in marked pieces and a last line
// without a newline arrives too.
#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "launch/executor.h"

namespace topolaunch::testing {
namespace {

const char* kTorchrun = "/usr/bin/torchrun --redirects 9:0 --tee 9:0";  // Debian's torch 1.13 needs both (TESTBED.md)

// Four ranks: 2,000 plain print() lines each (under PYTHONUNBUFFERED print
// writes text and newline apart: through torchrun's shared stdout, lines
// would mix), a line on stderr, rank 1 a 1 MiB line, rank 2 a last line
// without a newline.
constexpr const char* kScript = R"PY(import os, sys
rank = int(os.environ["RANK"])
for i in range(2000):
    print("@line", rank, i, "x" * (i % 50))
print("@err", rank, file=sys.stderr)
if rank == 1:
    print("@big " + "0123456789abcdef" * 65536)
if rank == 2:
    sys.stdout.write("@last without a newline")
)PY";

constexpr size_t kBigLine = 5 + 16 * 65536;

struct Labelled {
  int rank = -1;  ///< -1: the node's own line
  std::string text;
};

// "HOST[0] 3: text" and "HOST[0]: text" lines.
std::vector<Labelled> ParseLabelled(const std::string& output) {
  static const std::regex kLabel(R"(^[^\s\[]+\[0\](?: (\d+))?: )");
  std::vector<Labelled> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (!std::regex_search(line, match, kLabel)) continue;
    lines.push_back({match[1].matched ? std::stoi(match[1]) : -1, match.suffix()});
  }
  return lines;
}

// Each rank's "@line" lines: 0..1999 exactly once, in order, whole.
void ExpectEveryLineWholeOnce(const std::vector<Labelled>& lines, const std::set<int>& ranks) {
  std::map<int, int> next;
  int broken = 0;
  for (const Labelled& line : lines) {
    if (!line.text.starts_with("@line ")) continue;
    std::istringstream fields(line.text.substr(6));
    int rank = -1, i = -1;
    std::string xs;
    fields >> rank >> i >> xs;
    bool whole = rank == line.rank && i == next[rank] && xs == std::string(static_cast<size_t>(i % 50), 'x') &&
                 line.text == "@line " + std::to_string(rank) + " " + std::to_string(i) + " " + xs;
    if (!whole && ++broken <= 5) ADD_FAILURE() << "broken, mislabelled, repeated or out of order: [" << line.rank << "] " << line.text;
    next[rank] = i + 1;
  }
  EXPECT_EQ(broken, 0);
  std::set<int> seen;
  for (auto [rank, count] : next) {
    seen.insert(rank);
    EXPECT_EQ(count, 2000) << "rank " << rank;
  }
  EXPECT_EQ(seen, ranks);
}

// The 1 MiB line, put back together from its marked pieces.
void ExpectTheBigLineInMarkedPieces(const std::vector<Labelled>& lines) {
  std::string marker(LineSplitter::kSplitMarker);
  std::string joined;
  size_t pieces = 0;
  bool in_big = false;
  for (const Labelled& line : lines) {
    if (line.rank != 1 || !(in_big || line.text.starts_with("@big "))) continue;
    in_big = line.text.ends_with(marker);
    ++pieces;
    joined += in_big ? line.text.substr(0, line.text.size() - marker.size()) : line.text;
    if (!in_big) break;
  }
  std::string expected = "@big ";
  for (int i = 0; i < 65536; ++i) expected += "0123456789abcdef";
  EXPECT_EQ(joined.size(), kBigLine);
  EXPECT_TRUE(joined == expected) << "the 1 MiB line came back changed";
  EXPECT_EQ(pieces, (kBigLine + (64 << 10) - 1) / (64 << 10)) << "64 KiB pieces";
}

class RunRankOutputCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access("/usr/bin/torchrun", X_OK), 0) << "Debian's python3-torch is not installed (bash tests/install_deps.sh test)";
    std::ofstream(dir_.File("ranks.py")) << kScript;
  }
  ProcessResult Run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",  "--nproc-per-node", "4", "--no-gpus", "--master-port", std::to_string(FreePort()),
                                     "--grace", "1", "--torchrun", kTorchrun, "--python", "/usr/bin/python3"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(dir_.File("ranks.py"));
    return RunTopolaunch(args);
  }
  TempDir dir_;
};

TEST_F(RunRankOutputCliTest, FourRanksOfPlainPrintsArriveWholeOnceAndLabelled) {
  ProcessResult result = Run({});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  std::vector<Labelled> out = ParseLabelled(result.out);
  ExpectEveryLineWholeOnce(out, {0, 1, 2, 3});
  ExpectTheBigLineInMarkedPieces(out);
  EXPECT_NE(result.out.find("[0] 2: @last without a newline\n"), std::string::npos);
  std::vector<Labelled> err = ParseLabelled(result.err);
  for (int rank = 0; rank < 4; ++rank) {
    bool found = false;
    for (const Labelled& line : err) found = found || (line.rank == rank && line.text == "@err " + std::to_string(rank));
    EXPECT_TRUE(found) << "rank " << rank << "'s stderr line, on stderr:\n" << result.err.substr(0, 3000);
  }
  bool torchrun_own = false;  // torchrun's banner, unlabelled
  for (const Labelled& line : err) torchrun_own = torchrun_own || (line.rank < 0 && line.text.find("OMP_NUM_THREADS") != std::string::npos);
  EXPECT_TRUE(torchrun_own) << result.err.substr(0, 3000);
}

TEST_F(RunRankOutputCliTest, RanksOutputShowsOnlyTheRanksAsked) {
  ProcessResult result = Run({"--ranks-output", "0,3"});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  ExpectEveryLineWholeOnce(ParseLabelled(result.out), {0, 3});
  EXPECT_EQ(result.out.find("@big"), std::string::npos);
  EXPECT_EQ(result.out.find("@last"), std::string::npos);

  ProcessResult outside = Run({"--ranks-output", "2-4"});
  EXPECT_EQ(outside.exit_code, 2) << outside.Describe();
  EXPECT_NE(outside.err.find("--ranks-output: rank 4 is not in the job (ranks 0-3)"), std::string::npos) << outside.err;
  ProcessResult bad = Run({"--ranks-output", "one"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("--ranks-output"), std::string::npos) << bad.err;
}

TEST_F(RunRankOutputCliTest, LogDirGetsAFilePerRankAndTheNodesOwnLinesApart) {
  std::string logs = dir_.File("logs");
  ProcessResult result = Run({"--log-dir", logs, "--ranks-output", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  // The terminal: rank 2 only.
  ExpectEveryLineWholeOnce(ParseLabelled(result.out), {2});
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(logs)) files.insert(entry.path().filename());
  std::set<std::string> ranks = {"0.log", "1.log", "2.log", "3.log"};
  ASSERT_EQ(files.size(), 5u) << "4 ranks and the node";
  for (const std::string& rank : ranks) EXPECT_TRUE(files.count(rank)) << rank;
  for (int rank = 0; rank < 4; ++rank) {
    std::string text = ReadFile(logs + "/" + std::to_string(rank) + ".log");
    std::vector<Labelled> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back({rank, line});
    ExpectEveryLineWholeOnce(lines, {rank});
    EXPECT_NE(text.find("@err " + std::to_string(rank) + "\n"), std::string::npos) << "stderr in the rank's file too";
    if (rank == 1) ExpectTheBigLineInMarkedPieces(lines);
    // The last stdout line, without a newline, arrives whole. Its place
    // among the rank's stderr lines is not fixed: two streams, as with pipes.
    if (rank == 2) {
      EXPECT_NE(text.find("\n@last without a newline\n"), std::string::npos) << text.substr(text.size() > 300 ? text.size() - 300 : 0);
    }
  }
  std::string node_file;
  for (const std::string& file : files)
    if (!ranks.count(file)) node_file = ReadFile(logs + "/" + file);
  EXPECT_NE(node_file.find("OMP_NUM_THREADS"), std::string::npos) << "torchrun's own lines in HOST.log";
  EXPECT_EQ(node_file.find("@line"), std::string::npos);
}

}  // namespace
}  // namespace topolaunch::testing
