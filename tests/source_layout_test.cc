// The source tree keeps the shape STYLE.md asks for, checked on the files
// themselves so that a change which breaks it fails here, not in review:
//   - each room includes only the rooms below it (the table below);
//   - no file passes 500 lines;
//   - in the rooms that grow with every `run` feature (src/launch, src/run,
//     src/cli) no function passes about 80 lines.
// The function finder is a line-based heuristic (a definition starts at
// column 0 and its body is brace-balanced), enough for this code base's
// formatting; it is itself tested on a sample.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(TOPOLAUNCH_SOURCE_DIR) / "src";

// What each room of src/ may include, besides itself, core and the public
// headers. A room listed here is above every room it names.
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"core", {}},
    {"discover", {}},
    {"audit", {"discover"}},
    {"rankmap", {"audit", "discover"}},
    {"env", {}},
    {"show", {"audit", "discover", "rankmap"}},
    {"launch", {"audit", "discover", "env", "rankmap"}},
    {"run", {"audit", "discover", "env", "launch", "rankmap"}},
    {"cli", {"audit", "discover", "env", "launch", "rankmap", "run", "show"}},
};

// Known climbs, each with its reason; a new one fails the test.
const std::set<std::pair<std::string, std::string>> kKnownClimbs = {
    // The Slurm block writer orders blocks as the plan orders nodes; the
    // Slurm writers are to move to a room above rankmap with the Slurm
    // topology work (topology.yaml, versions).
    {"discover/slurm_block_writer.cc", "rankmap"},
};

std::vector<std::string> ReadLines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<fs::path> SourceFiles(const fs::path& room) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(room)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".cc" || ext == ".h")) files.push_back(entry.path());
  }
  return files;
}

// The functions longer than `limit` lines, as "name: N lines".
std::vector<std::string> LongFunctions(const std::vector<std::string>& lines, size_t limit) {
  static const std::regex kSignature(R"(^(static |inline )?[A-Za-z_][\w:<>,*& ]*[\s*&]+[\w:~]+\()");
  std::vector<std::string> long_ones;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (!std::regex_search(line, kSignature) || line.starts_with("namespace") || line.starts_with("return") ||
        line.starts_with("using"))
      continue;
    size_t open = i;
    while (open < lines.size() && lines[open].find('{') == std::string::npos && !lines[open].ends_with(";")) ++open;
    if (open == lines.size() || lines[open].find('{') == std::string::npos) continue;
    int depth = 0;
    for (size_t k = open; k < lines.size(); ++k) {
      for (char c : lines[k]) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (depth > 0) continue;
      if (k - i + 1 > limit) long_ones.push_back(line.substr(0, line.find('(')) + ": " + std::to_string(k - i + 1) + " lines");
      i = k;
      break;
    }
  }
  return long_ones;
}

TEST(SourceLayout, EveryRoomIsInTheTable) {
  for (const fs::directory_entry& room : fs::directory_iterator(kSource))
    if (room.is_directory()) EXPECT_TRUE(kMayInclude.contains(room.path().filename().string())) << room.path().filename();
}

TEST(SourceLayout, NoIncludeClimbsTheLayers) {
  static const std::regex kInclude(R"re(^#include "([a-z_]+)/)re");
  for (const auto& [room, allowed] : kMayInclude) {
    if (!fs::is_directory(kSource / room)) continue;
    for (const fs::path& file : SourceFiles(kSource / room))
      for (const std::string& line : ReadLines(file)) {
        std::smatch match;
        if (!std::regex_search(line, match, kInclude)) continue;
        std::string target = match[1];
        if (target == room || target == "core" || target == "topolaunch" || allowed.contains(target)) continue;
        std::string where = room + "/" + file.filename().string();
        EXPECT_TRUE(kKnownClimbs.contains({where, target})) << where << " includes " << target << "/, above " << room;
      }
  }
}

TEST(SourceLayout, NoFileOver500Lines) {
  for (const auto& [room, allowed] : kMayInclude) {
    if (!fs::is_directory(kSource / room)) continue;
    for (const fs::path& file : SourceFiles(kSource / room))
      EXPECT_LE(ReadLines(file).size(), 500u) << room << "/" << file.filename().string();
  }
}

TEST(SourceLayout, RunRoomsHaveNoLongFunctions) {
  for (const char* room : {"launch", "run", "cli"})
    for (const fs::path& file : SourceFiles(kSource / room))
      for (const std::string& function : LongFunctions(ReadLines(file), 80))
        ADD_FAILURE() << room << "/" << file.filename().string() << ": " << function;
}

TEST(SourceLayout, FunctionFinderSeesLongAndShortFunctions) {
  std::vector<std::string> lines = {"namespace x {", "int Short(int a) {", "  return a;", "}",
                                    "std::vector<int> Long(int a,", "                      int b) {"};
  for (int i = 0; i < 90; ++i) lines.push_back("  if (a) { b += 1; }");
  lines.push_back("  auto f = [&] {");
  lines.push_back("  };");
  lines.push_back("}");
  lines.push_back("}  // namespace x");
  std::vector<std::string> found = LongFunctions(lines, 80);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "std::vector<int> Long: 95 lines");
  EXPECT_TRUE(LongFunctions(lines, 100).empty());
}

}  // namespace
