// `topolaunch show` end to end: the binary on topologies discovered from the
// real fabric dumps, its SVG read back by a real XML parser (Python's), its
// HTML opened by headless Chromium (a screenshot that must not be blank, and
// the page's own count of what it drew, read back from its title).
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "rankmap/plan_json.h"
#include "rankmap/rankmap_test_util.h"

namespace topolaunch::testing {
namespace {

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

ProcessSpec Command(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

std::string Script(const std::string& name) { return std::string(TOPOLAUNCH_SOURCE_DIR) + "/tests/show/" + name; }

// The SVG's structure as svg_structure.py reads it.
nlohmann::json Structure(const std::string& path) {
  ProcessResult r = RunProcess(Command({"python3", Script("svg_structure.py"), path}));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

Topology Discovered(const std::string& dump, const std::string& out) {
  ProcessResult r = RunTopolaunch({"discover", "--fabric", TestDataDir() + "/ibnet/" + dump, "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  Result<Topology> t = ParseTopologyJson(ReadFile(out), out);
  EXPECT_TRUE(t.ok());
  return t.ok() ? *t : Topology{};
}

int BoxCount(const Topology& t) {
  int leaves = 0;
  for (const TopologySwitch& s : t.switches) leaves += s.level == 1;
  return leaves;
}

// Every switch, host and cable of `t` in the SVG, each once.
void ExpectAllDrawn(const nlohmann::json& s, const Topology& t, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(s["switches"], t.switches.size());
  EXPECT_EQ(s["hosts"].get<size_t>() + s["boxed_hosts"].get<size_t>(), t.hosts.size());
  EXPECT_EQ(s["cables"], t.links.size());
  EXPECT_TRUE(s["ids_unique"].get<bool>());
  std::vector<std::string> names;
  for (const TopologySwitch& sw : t.switches) names.push_back(sw.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(s["switch_names"].get<std::vector<std::string>>(), names);
  std::map<std::string, int> reasons;
  for (const UnmappedCa& u : t.unmapped) ++reasons[u.reason];
  EXPECT_EQ(s["unmapped_groups"], reasons.size());
}

class ShowCli : public ::testing::Test {
 protected:
  ProcessResult Show(std::vector<std::string> args) {
    args.insert(args.begin(), "show");
    return RunTopolaunch(args);
  }

  // `topolaunch plan --topology T ARGS...`, outside any Slurm allocation.
  ProcessResult RunPlan(const std::string& topology, std::vector<std::string> args) {
    args.insert(args.begin(), {"plan", "--topology", topology});
    return RunTopolaunch(args, {{"SLURM_JOB_NODELIST", ""}});
  }

  bool HaveChromium() { return access("/usr/bin/chromium", X_OK) == 0; }

  // Headless Chromium: a screenshot of `page` and the DOM after its scripts ran.
  std::pair<nlohmann::json, std::string> OpenInChromium(const std::string& page, const std::string& png) {
    std::vector<std::string> common = {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                       "--user-data-dir=" + dir_.File("chromium-profile"), "--window-size=1400,900"};
    ProcessSpec shot = Command(common);
    shot.argv.push_back("--screenshot=" + png);
    shot.argv.push_back("file://" + page);
    ProcessResult r = RunProcess(shot);
    EXPECT_EQ(r.exit_code, 0) << r.Describe();
    ProcessSpec dom = Command(common);
    dom.argv.push_back("--dump-dom");
    dom.argv.push_back("file://" + page);
    ProcessResult d = RunProcess(dom);
    EXPECT_EQ(d.exit_code, 0) << d.Describe();
    ProcessResult ink = RunProcess(Command({"python3", Script("png_ink.py"), png}));
    EXPECT_EQ(ink.exit_code, 0) << ink.Describe();
    size_t open = d.out.find("<title>"), close = d.out.find("</title>");
    std::string title = open == std::string::npos || close == std::string::npos ? "" : d.out.substr(open + 7, close - open - 7);
    return {ink.exit_code == 0 ? nlohmann::json::parse(ink.out) : nlohmann::json::object(), title};
  }

  // The DOM of `url` after its scripts ran.
  std::string DumpDom(const std::string& url) {
    ProcessResult d = RunProcess(Command({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                   "--user-data-dir=" + dir_.File("chromium-profile"), "--dump-dom", "file://" + url}));
    EXPECT_EQ(d.exit_code, 0) << d.Describe();
    return d.out;
  }

  // The page drew what the topology holds, by its own count, and shows something.
  void ExpectPageConsistent(const std::string& page, const Topology& t, size_t extra_hosts = 0) {
    auto [ink, title] = OpenInChromium(page, page + ".png");
    SCOPED_TRACE(page);
    EXPECT_GT(ink.value("ink", 0.0), 0.02) << "a blank page";
    EXPECT_GT(ink.value("colours", 0), 8) << "a page of one colour";
    std::string want = fmt::format("ok: drawn {} switches, {} hosts (", t.switches.size(), t.hosts.size() + extra_hosts);
    EXPECT_EQ(title.rfind(want, 0), 0u) << title;
    EXPECT_NE(title.find(fmt::format("), {} cables |", t.links.size())), std::string::npos) << title;
  }

  TempDir dir_;
};

TEST_F(ShowCli, EveryRealDumpIsDrawnWholeAsHostsAndAsBoxes) {
  for (const char* dump : {"doc-manpage-ibnetdiscover-2sw-4ca.ibnet", "doc-nvidia-ibdiagpath-2sw-6ca.ibnet",
                           "gb200-isolated-single-ca-0sw-1ca.ibnet", "nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet",
                           "psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet", "quantum-hdr-2019-60sw-2ca-crlf.ibnet",
                           "stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet"}) {
    std::string topology = dir_.File(std::string(dump) + ".json");
    Topology t = Discovered(dump, topology);
    std::string svg = dir_.File("fabric.svg"), boxes = dir_.File("boxes.svg");
    ProcessResult r = Show({"--topology", topology, "-o", svg});
    ASSERT_EQ(r.exit_code, 0) << dump << ": " << r.Describe();
    nlohmann::json s = Structure(svg);
    ExpectAllDrawn(s, t, dump);
    EXPECT_EQ(s["hosts"], t.hosts.size()) << "small fabrics are drawn host by host";
    EXPECT_EQ(s["titles"].get<size_t>(), 1 + s["switches"].get<size_t>() + s["hosts"].get<size_t>() + s["wires"].get<size_t>() +
                                             s["unmapped_groups"].get<size_t>())
        << "every switch, host and cable has its details";
    ASSERT_EQ(Show({"--topology", topology, "--max-hosts-drawn", "0", "-o", boxes}).exit_code, 0);
    nlohmann::json b = Structure(boxes);
    ExpectAllDrawn(b, t, std::string(dump) + " as boxes");
    EXPECT_EQ(b["hosts"], 0) << dump;
    EXPECT_LE(b["leafboxes"].get<int>(), BoxCount(t)) << dump;
  }
}

TEST_F(ShowCli, TheSameInputGivesTheSameBytesAndTheFormatFollowsTheFileName) {
  std::string topology = dir_.File("t.json");
  Discovered("stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", topology);
  ProcessResult a = Show({"--topology", topology}), b = Show({"--topology", topology});
  ASSERT_EQ(a.exit_code, 0) << a.Describe();
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.rfind("<?xml", 0), 0u) << "SVG on stdout by default";
  ASSERT_EQ(Show({"--topology", topology, "-o", dir_.File("a.html")}).exit_code, 0);
  ASSERT_EQ(Show({"--topology", topology, "-o", dir_.File("b.html")}).exit_code, 0);
  std::string html = ReadFile(dir_.File("a.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html, ReadFile(dir_.File("b.html")));
  ProcessResult forced = Show({"--topology", topology, "--format", "svg", "-o", dir_.File("c.html")});
  ASSERT_EQ(forced.exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.File("c.html")), a.out);
}

TEST_F(ShowCli, BadInputIsNamedAndWritesNothing) {
  std::string topology = dir_.File("t.json");
  Discovered("doc-manpage-ibnetdiscover-2sw-4ca.ibnet", topology);
  std::string out = dir_.File("never.svg");
  WriteText(dir_.File("plan.json"), R"({"schema": "topolaunch.plan/1", "nproc_per_node": "eight"})");
  WriteText(dir_.File("audit.json"), R"({"schema": "topolaunch.audit/1", "findings": [{"severity": "grave"}]})");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--topology", dir_.File("missing.json")}, "missing.json"},
           {{"--topology", topology, "--plan", dir_.File("plan.json")}, "plan.json: $.nproc_per_node"},
           {{"--topology", topology, "--audit", dir_.File("audit.json")}, "audit.json: $.findings[0].severity"},
           {{"--topology", dir_.File("plan.json")}, "plan.json"},
           {{"--topology", topology, "--format", "png"}, "--format"},
       }) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"-o", out});
    ProcessResult r = Show(args);
    EXPECT_EQ(r.exit_code, 2) << r.Describe();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_NE(access(out.c_str(), F_OK), 0) << "nothing written on an error";
  }
}

// `-o fabric.png` wrote SVG into a .png and exited 0.
TEST_F(ShowCli, AnOutputNamedForAnotherFormatIsRefused) {
  std::string topology = dir_.File("t.json");
  Discovered("doc-manpage-ibnetdiscover-2sw-4ca.ibnet", topology);
  ProcessResult png = Show({"--topology", topology, "-o", dir_.File("fabric.png")});
  EXPECT_EQ(png.exit_code, 2) << png.Describe();
  EXPECT_NE(png.err.find("show writes SVG (.svg) or HTML (.html), not .png"), std::string::npos) << png.err;
  EXPECT_NE(access(dir_.File("fabric.png").c_str(), F_OK), 0) << "nothing written";
  ASSERT_EQ(Show({"--topology", topology, "-o", dir_.File("FABRIC.SVG")}).exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.File("FABRIC.SVG")).rfind("<?xml", 0), 0u);
  ASSERT_EQ(Show({"--topology", topology, "-o", dir_.File("fabric")}).exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.File("fabric")).rfind("<?xml", 0), 0u) << "no extension: SVG, as on stdout";
  ASSERT_EQ(Show({"--topology", topology, "--format", "html", "-o", dir_.File("page.png")}).exit_code, 0)
      << "--format says what is meant";
}

TEST_F(ShowCli, PlanAndAuditTextSayHowToDrawThem) {
  std::string topology = dir_.File("t.json");
  Discovered("nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet", topology);
  ProcessResult plan = RunPlan(topology, {"--nproc-per-node", "1"});
  ASSERT_EQ(plan.exit_code, 0) << plan.Describe();
  EXPECT_NE(plan.out.find(fmt::format("topolaunch show --topology {} --plan plan.json", topology)), std::string::npos) << plan.out;
  ProcessResult audit = RunTopolaunch({"audit", "--topology", topology});
  EXPECT_NE(audit.out.find(fmt::format("topolaunch show --topology {} --audit audit.json", topology)), std::string::npos) << audit.out;
  ProcessResult json = RunPlan(topology, {"--nproc-per-node", "1", "--json"});
  EXPECT_EQ(json.out.find("draw it"), std::string::npos) << "data stays data";
}

TEST_F(ShowCli, APlanAndAnAuditAreDrawnWhereTheyBelong) {
  std::string topology = dir_.File("t.json");
  Topology t = Discovered("stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", topology);
  std::string plan = dir_.File("plan.json"), audit = dir_.File("audit.json");
  ProcessResult p = RunPlan(topology, {"--nnodes", "40", "--nproc-per-node", "8", "--json", "-o", plan});
  ASSERT_EQ(p.exit_code, 0) << p.Describe();
  // One finding on a host's cable (by its switch port), one on a host, one about the whole fabric.
  const HcaAttachment& cable = t.FindHost("stage7")->hcas.front();
  WriteText(audit, fmt::format(R"({{"schema": "topolaunch.audit/1", "findings": [
      {{"severity": "error", "check": "link_speed", "switch_guid": "{}", "port": {}, "message": "slow"}},
      {{"severity": "warning", "check": "gpu_pcie_link", "host": "stage9", "message": "x8"}},
      {{"severity": "critical", "check": "sm", "message": "no SM"}}]}})",
                               FormatGuid(*cable.switch_guid), *cable.switch_port));
  std::string svg = dir_.File("placed.svg");
  ProcessResult r = Show({"--topology", topology, "--plan", plan, "--audit", audit, "-o", svg});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("1 audit finding(s) name no switch, host or cable"), std::string::npos) << r.err;
  nlohmann::json s = Structure(svg);
  ExpectAllDrawn(s, t, "with plan and audit");
  EXPECT_EQ(s["ring_stops"], 40);
  EXPECT_EQ(s["severities"], (nlohmann::json{"error", "warning"}));
  std::string text = ReadFile(svg);
  Result<Plan> parsed = ParsePlanJson(ReadFile(plan), plan);
  ASSERT_TRUE(parsed.ok());
  EXPECT_NE(text.find(fmt::format("data-name=\"{}\" data-hosts=\"1\" data-rank=\"0\"", parsed->nodes[0].host)), std::string::npos);
  EXPECT_NE(text.find(fmt::format("leaf: ring crosses {} time", parsed->metrics.ring_leaf_crossings)), std::string::npos);
}

TEST_F(ShowCli, ChromiumShowsARealTwoLevelFabricWithAPlan) {
  if (!HaveChromium()) GTEST_SKIP() << "no /usr/bin/chromium (tests/install_deps.sh test installs it)";
  std::string topology = dir_.File("t.json");
  Topology t = Discovered("stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", topology);
  std::string plan = dir_.File("plan.json");
  ASSERT_EQ(RunPlan(topology, {"--nnodes", "64", "--nproc-per-node", "4", "--json", "-o", plan}).exit_code, 0);
  std::string page = dir_.File("stage.html");
  ASSERT_EQ(Show({"--topology", topology, "--plan", plan, "-o", page}).exit_code, 0);
  ExpectPageConsistent(page, t);
}

TEST_F(ShowCli, ChromiumShowsARealThreeLevelFabricWithAPlan) {
  if (!HaveChromium()) GTEST_SKIP() << "no /usr/bin/chromium (tests/install_deps.sh test installs it)";
  std::string topology = dir_.File("t.json");
  Topology t = Discovered("quantum-hdr-2019-60sw-2ca-crlf.ibnet", topology);
  ASSERT_EQ(std::max_element(t.switches.begin(), t.switches.end(), [](auto& a, auto& b) { return a.level < b.level; })->level, 3);
  std::string plan = dir_.File("plan.json");
  ASSERT_EQ(RunPlan(topology, {"--nproc-per-node", "8", "--json", "-o", plan}).exit_code, 0);
  std::string page = dir_.File("quantum.html");
  ASSERT_EQ(Show({"--topology", topology, "--plan", plan, "-o", page}).exit_code, 0);
  ExpectPageConsistent(page, t);
}

TEST_F(ShowCli, TenThousandHostsAreBoxesInAPageOfAFewMegabytes) {
  std::string topology = dir_.File("t.json");
  Topology t = TopologyOf(TwoLevelFatTree({.leaves = 250, .hosts_per_leaf = 40, .spines = 20}));
  WriteText(topology, FormatTopologyJson(t));
  std::string plan = dir_.File("plan.json");
  ASSERT_EQ(RunPlan(topology, {"--nnodes", "9000", "--nproc-per-node", "8", "--json", "-o", plan}).exit_code, 0);
  std::string page = dir_.File("big.html");
  ProcessResult r = Show({"--topology", topology, "--plan", plan, "-o", page});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("each leaf's hosts are one box"), std::string::npos) << r.err;
  size_t size = ReadFile(page).size();
  EXPECT_LT(size, 4u << 20) << "the page stays a few MB";
  nlohmann::json s = Structure(page);
  ExpectAllDrawn(s, t, "10,000 hosts");
  EXPECT_EQ(s["leafboxes"], 250);
  EXPECT_EQ(s["hosts"], 0);
  if (!HaveChromium()) return;
  ExpectPageConsistent(page, t);
  // The page's search (page.html#host=NAME) opens the host's box and marks
  // its entry, and the details panel shows it; an unknown name says so.
  std::string host = t.hosts[4321].name;
  std::string dom = DumpDom(page + "#host=" + host);
  EXPECT_NE(dom.find("class=\"expanded\""), std::string::npos) << "the box was not opened";
  EXPECT_NE(dom.find(fmt::format("class=\"entry hit\" data-name=\"{}\"", host)), std::string::npos) << "the entry was not marked";
  EXPECT_NE(dom.find(fmt::format("<pre id=\"details\" style=\"display: block;\">{}", host)), std::string::npos);
  std::string none = DumpDom(page + "#host=nosuchhost");
  EXPECT_NE(none.find("no host named nosuchhost"), std::string::npos);
  EXPECT_EQ(none.find("class=\"expanded\""), std::string::npos);
}

}  // namespace
}  // namespace topolaunch::testing
