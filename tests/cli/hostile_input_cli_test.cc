// Hostile and damaged input through the real binary: bytes that are not
// UTF-8 in node descriptions, a dump pasted with its shell prompt, and hwloc
// XML exports that crash libhwloc 2.9 itself (tests/data/hwloc-damaged).
// Never a crash; JSON always valid UTF-8; every bad file named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_test_util.h"
#include "core/json_text.h"

namespace topolaunch::testing {
namespace {

namespace fs = std::filesystem;

// One switch, two CAs: "node1 caf\xE9" (a host whose HCA description holds a
// Latin-1 byte) and "\xFF HCA-1" (unmapped: its first word is no host name),
// after the prompt line the dump was pasted with.
std::string DumpWithBadBytes() {
  return "[root@login1 ~]# ibnetdiscover\n"
         "vendid=0x2c9\ndevid=0xb924\nsysimgguid=0x8f105001094d3\nswitchguid=0x8f105001094d2(8f105001094d2)\n"
         "Switch\t24 \"S-0008f105001094d2\"\t\t# \"ISR9024D Voltaire\" base port 0 lid 6 lmc 0\n"
         "[1]\t\"H-0008f10403961354\"[1](8f10403961355) \t\t# \"node1 caf\xE9\" lid 1 4xSDR\n"
         "[2]\t\"H-0008f10403961360\"[1](8f10403961361) \t\t# \"\xFF HCA-1\" lid 2 4xSDR\n\n"
         "vendid=0x2c9\ndevid=0x6274\nsysimgguid=0x8f10403961357\ncaguid=0x8f10403961354\n"
         "Ca\t1 \"H-0008f10403961354\"\t\t# \"node1 caf\xE9\"\n"
         "[1](8f10403961355) \t\"S-0008f105001094d2\"[1]\t\t# lid 1 lmc 0 \"ISR9024D Voltaire\" lid 6 4xSDR\n\n"
         "vendid=0x2c9\ndevid=0x6274\nsysimgguid=0x8f10403961363\ncaguid=0x8f10403961360\n"
         "Ca\t1 \"H-0008f10403961360\"\t\t# \"\xFF HCA-1\"\n"
         "[1](8f10403961361) \t\"S-0008f105001094d2\"[2]\t\t# lid 2 lmc 0 \"ISR9024D Voltaire\" lid 6 4xSDR\n";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Damaged(const std::string& name) { return TestDataDir() + "/hwloc-damaged/" + name; }

const char* const kDamagedExports[] = {"missing-complete-cpuset.xml", "missing-complete-nodeset.xml",
                                       "truncated-topology-tag.xml", "capacity-memattr.xml"};

TEST(HostileInput, BytesThatAreNotUtf8BecomeReplacementCharactersInValidJson) {
  TempDir dir;
  std::ofstream(dir.File("fabric.ibnet"), std::ios::binary) << DumpWithBadBytes();
  ProcessResult r = RunTopolaunch({"discover", "--fabric", dir.File("fabric.ibnet"), "-o", dir.File("topology.json")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::string json = ReadFile(dir.File("topology.json"));
  EXPECT_TRUE(IsValidUtf8(json));
  Result<Topology> t = ParseTopologyJson(json, "topology.json");
  ASSERT_TRUE(t.ok()) << t.error().Message();
  ASSERT_EQ(t->hosts.size(), 1u);
  EXPECT_EQ(t->hosts[0].name, "node1");
  EXPECT_EQ(t->hosts[0].hcas.at(0).description, "node1 caf\xEF\xBF\xBD");
  ASSERT_EQ(t->unmapped.size(), 1u);
  EXPECT_EQ(t->unmapped[0].description, "\xEF\xBF\xBD HCA-1");

  // Every other command that reads the dump or writes JSON from it holds too.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"discover", "--fabric", dir.File("fabric.ibnet"), "--format", "text"},
        {"discover", "--fabric", dir.File("fabric.ibnet"), "--format", "slurm"},
        {"audit", "--fabric", dir.File("fabric.ibnet"), "--json"},
        {"plan", "--topology", dir.File("topology.json"), "--json"},
        {"env", "--topology", dir.File("topology.json"), "--host", "node1", "--format", "json"}}) {
    ProcessResult c = RunTopolaunch(args);
    EXPECT_EQ(c.term_signal, 0) << args[0] << " " << args.back() << ": " << c.Describe();
    EXPECT_TRUE(c.exit_code >= 0 && c.exit_code <= 3) << args[0] << ": " << c.Describe();
    if (args.back() == "--json" || args.back() == "json") {
      EXPECT_TRUE(IsValidUtf8(c.out)) << args[0];
    }
  }
}

TEST(HostileInput, AShellPromptBeforeTheDumpIsSkippedWithANote) {
  TempDir dir;
  std::ofstream(dir.File("pasted.ibnet"), std::ios::binary) << DumpWithBadBytes();
  ProcessResult r = RunTopolaunch({"discover", "--fabric", dir.File("pasted.ibnet"), "--format", "text"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("pasted.ibnet:1: skipped 1 line before the first record (\"[root@login1 ~]# ibnetdiscover\")"),
            std::string::npos)
      << r.err;
}

TEST(HostileInput, ALineLikeAPortLineOutsideARecordIsStillAnError) {
  TempDir dir;
  std::ofstream(dir.File("f.ibnet")) << "[1]\t\"H-0008f10403961354\"[1] # \"x\" lid 1 4xSDR\n";
  ProcessResult r = RunTopolaunch({"discover", "--fabric", dir.File("f.ibnet")});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("f.ibnet:1: port line outside a record"), std::string::npos) << r.err;
}

// How a damaged export must be reported: named, with why. hwloc's own XML
// parser crashes on each of them (lstopo --input too). With libhwloc-plugins
// installed (Open MPI pulls it in) hwloc parses with libxml2 instead, which
// refuses the truncated one before anything can crash.
bool NamedWithAClearReason(const std::string& err, const std::string& file) {
  return err.find(file + ": libhwloc crashed reading this file") != std::string::npos ||
         err.find(file + ": not a valid hwloc XML topology") != std::string::npos;
}

// Each damaged export kills libhwloc's own parser; the baseline they were
// cut from loads, so the damage is what the test is about.
TEST(HostileInput, EachExportThatCrashesLibhwlocIsNamedAndTheOthersStillLoad) {
  ProcessResult baseline =
      RunTopolaunch({"discover", "--fabric", "none", "--hwloc-xml", Damaged("baseline-reduced.xml"), "--format", "text"});
  ASSERT_EQ(baseline.exit_code, 0) << baseline.Describe();

  TempDir dir;
  fs::create_directory(dir.File("layouts"));
  fs::copy_file(TestDataDir() + "/hwloc/jsc-juwels-booster-2xEPYC7402-4xA100-4xHDR.xml", dir.File("layouts/jwb0001.xml"));
  for (int i = 0; const char* name : kDamagedExports)
    fs::copy_file(Damaged(name), dir.File("layouts/bad" + std::to_string(++i) + ".xml"));
  fs::copy_file(TestDataDir() + "/hwloc/llnl-lassen-power9-4xV100-4xCX5.xml", dir.File("layouts/zz9.xml"));
  ProcessResult r = RunTopolaunch(
      {"discover", "--fabric", "none", "--layout-dir", dir.File("layouts"), "-o", dir.File("topology.json")});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_EQ(r.term_signal, 0);
  int crashed = 0;
  for (int i = 1; i <= 4; ++i) {
    std::string file = "bad" + std::to_string(i) + ".xml";
    EXPECT_TRUE(NamedWithAClearReason(r.err, file)) << file << "\n" << r.err;
    crashed += r.err.find(file + ": libhwloc crashed") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(crashed, 3) << "the crash path must be what most of them take: " << r.err;
  EXPECT_NE(r.err.find("Assertion"), std::string::npos) << "the assert's own words: " << r.err;
  EXPECT_EQ(r.err.find("jwb0001.xml"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("zz9.xml"), std::string::npos) << "read after the bad ones, and fine: " << r.err;
  EXPECT_FALSE(fs::exists(dir.File("topology.json"))) << "nothing half-written";
}

TEST(HostileInput, OneDamagedExportGivenAloneIsExit2ForDiscoverAndAudit) {
  for (const char* name : kDamagedExports) {
    ProcessResult d = RunTopolaunch({"discover", "--fabric", "none", "--hwloc-xml", Damaged(name)});
    EXPECT_EQ(d.exit_code, 2) << name << ": " << d.Describe();
    EXPECT_TRUE(NamedWithAClearReason(d.err, name)) << d.err;
    ProcessResult a = RunTopolaunch({"audit", "--hwloc-xml", Damaged(name)});
    EXPECT_EQ(a.term_signal, 0) << name << ": " << a.Describe();
    EXPECT_TRUE(NamedWithAClearReason(a.err, name)) << a.Describe();
  }
}

}  // namespace
}  // namespace topolaunch::testing
