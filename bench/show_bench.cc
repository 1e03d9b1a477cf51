// show benchmarks: prints figures, asserts nothing.
//
// `topolaunch show` on the largest shared real dumps (the most hosts: the
// 144-host stage cluster; the most cables: a 60-switch Quantum fabric) and on
// generated fabrics of 10,000 hosts (two and three levels) with a plan of
// 9,000 nodes: wall and CPU time, peak RSS and the output's size, for SVG
// and HTML, median of RUNS. Targets (issue 14): the largest shared dump in
// under a second, the 10,000-host page under a few MB.
//
// The peer: Graphviz `dot -Tsvg`, the usual way to draw a fabric from a dump,
// on a DOT file of the same switches, hosts and cables, in the same run; the
// ratio is topolaunch's time over dot's. dot's layered layout is quadratic or
// worse in the cables, so it runs on the real dumps only (the 10,000-host
// fabrics would take it minutes). Skipped with a message without `dot`
// (apt-get install graphviz; tests/install_deps.sh bench installs it).
//
// Usage: show_bench [RUNS]   (RUNS default 5)
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "bench_process.h"
#include "bench_stats.h"
#include "rankmap/rankmap_test_util.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/topology_json.h"

using topolaunch::bench::Median;
using topolaunch::bench::MeasureProcess;
using topolaunch::bench::ProcessFigures;

namespace {

using namespace topolaunch;
using topolaunch::testing::GeneratedFabric;

struct Case {
  std::string name;
  std::string topology;   // topology.json
  std::string plan;       // plan.json, or empty
  std::string dot;        // the same fabric for Graphviz, or empty
};

struct Row {
  double wall = 0, cpu = 0, rss = 0;
  size_t bytes = 0;
  int status = 0;
};

Row Measure(const std::vector<std::string>& argv, const std::string& out, int runs) {
  std::vector<double> wall, cpu, rss;
  Row row;
  for (int i = 0; i < runs; ++i) {
    ProcessFigures f = MeasureProcess(argv, out);
    wall.push_back(f.wall), cpu.push_back(f.cpu), rss.push_back(f.max_rss_mib);
    if (f.status != 0) row.status = f.status;
  }
  row.wall = Median(wall), row.cpu = Median(cpu), row.rss = Median(rss);
  std::error_code ec;
  row.bytes = std::filesystem::file_size(out, ec);
  return row;
}

std::string DotOf(const Topology& t) {
  std::string dot = "graph fabric {\n  node [shape=box];\n";
  std::map<Guid, std::string> node_of;
  for (const TopologySwitch& s : t.switches) {
    node_of[s.guid] = fmt::format("s{:x}", s.guid);
    dot += fmt::format("  s{:x} [label=\"{}\"];\n", s.guid, s.name.substr(0, 20));
  }
  for (size_t i = 0; i < t.hosts.size(); ++i) {
    dot += fmt::format("  h{} [label=\"{}\"];\n", i, t.hosts[i].name);
    for (const HcaAttachment& a : t.hosts[i].hcas) node_of[a.guid] = fmt::format("h{}", i);
  }
  for (const UnmappedCa& u : t.unmapped) {
    node_of[u.guid] = fmt::format("u{:x}", u.guid);
    dot += fmt::format("  u{:x} [label=\"CA\"];\n", u.guid);
  }
  for (const TopologyLink& l : t.links) {
    auto a = node_of.find(l.from.node_guid), b = node_of.find(l.to.node_guid);
    if (a != node_of.end() && b != node_of.end()) dot += fmt::format("  {} -- {};\n", a->second, b->second);
  }
  return dot + "}\n";
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

Case RealDump(const std::string& dir, const std::string& dump, bool write) {
  Case c{dump, dir + "/" + dump + ".json", "", dir + "/" + dump + ".dot"};
  if (!write) return c;
  MeasureProcess({testing::TopolaunchBinary(), "discover", "--fabric", testing::TestDataDir() + "/ibnet/" + dump, "-o", c.topology});
  Result<Topology> t = ParseTopologyJson(testing::ReadFile(c.topology), c.topology);
  if (t.ok()) Write(c.dot, DotOf(*t));
  return c;
}

Case FromGenerator(const std::string& dir, const std::string& name, bool write, GeneratedFabric (*fabric)()) {
  std::string file = name.substr(0, name.find(','));
  Case c{name, dir + "/" + file + ".json", dir + "/" + file + ".plan.json", ""};
  if (!write) return c;
  Write(c.topology, FormatTopologyJson(testing::TopologyOf(fabric())));
  MeasureProcess({testing::TopolaunchBinary(), "plan", "--topology", c.topology, "--nnodes", "9000", "--nproc-per-node", "8",
                  "--json", "-o", c.plan},
                 "/dev/null", {{"SLURM_JOB_NODELIST", ""}});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  testing::TempDir dir;
  bool have_dot = access("/usr/bin/dot", X_OK) == 0;
  // The inputs are made in a child: a forked process's peak RSS counts the
  // parent's pages, and these fabrics would be the figures' floor.
  auto make = [&](bool write) {
    return std::vector<Case>{
        RealDump(dir.path(), "stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", write),
        RealDump(dir.path(), "quantum-hdr-2019-60sw-2ca-crlf.ibnet", write),
        FromGenerator(dir.path(), "2-level, 10,000 hosts (250 leaves x 40, 20 spines)", write, [] {
          return testing::TwoLevelFatTree({.leaves = 250, .hosts_per_leaf = 40, .spines = 20});
        }),
        FromGenerator(dir.path(), "3-level, 10,240 hosts (8 pods x 32 leaves x 40)", write, [] {
          return testing::ThreeLevelFatTree({.pods = 8, .leaves_per_pod = 32, .hosts_per_leaf = 40, .spines_per_pod = 16, .cores = 16});
        }),
    };
  };
  pid_t child = fork();
  if (child == 0) {
    make(true);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::vector<Case> cases = make(false);
  fmt::print("topolaunch show, median of {} runs (wall s, CPU s, peak RSS MiB, output size)\n\n", runs);
  fmt::print("{:<52} {:>6} {:>8} {:>8} {:>8} {:>10} {:>14}\n", "input", "format", "wall", "CPU", "RSS", "bytes", "vs dot -Tsvg");
  double largest_dump_wall = 0;
  for (const Case& c : cases) {
    std::optional<Row> dot;
    if (have_dot && !c.dot.empty()) dot = Measure({"dot", "-Tsvg", c.dot}, dir.path() + "/dot.svg", runs);
    for (const char* format : {"svg", "html"}) {
      std::vector<std::string> args = {testing::TopolaunchBinary(), "show", "--topology", c.topology, "--format", format};
      if (!c.plan.empty()) args.insert(args.end(), {"--plan", c.plan});
      Row r = Measure(args, dir.path() + "/out." + format, runs);
      std::string ratio = dot ? fmt::format("{:.3f}x", r.wall / dot->wall) : have_dot ? "(too big)" : "(no dot)";
      fmt::print("{:<52} {:>6} {:>8.3f} {:>8.3f} {:>8.1f} {:>10} {:>14}{}\n", c.name.substr(0, 52), format, r.wall, r.cpu, r.rss,
                 r.bytes, ratio, r.status ? fmt::format("  (exit {})", r.status) : "");
      if (c.dot.size()) largest_dump_wall = std::max(largest_dump_wall, r.wall);
    }
    if (dot) fmt::print("{:<52} {:>6} {:>8.3f} {:>8.3f} {:>8.1f} {:>10}\n", "  Graphviz dot -Tsvg, same fabric", "svg", dot->wall, dot->cpu, dot->rss, dot->bytes);
  }
  fmt::print("\nlargest shared dump: {:.3f} s (target < 1 s)\n", largest_dump_wall);
  return 0;
}
