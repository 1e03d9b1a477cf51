// ParseIbnetdiscover on real dumps (tests/data/ibnet) and on the forms
// of the format that real dumps and ibsim net files use. Bad input is in
// ibnetdiscover_parser_errors_test.cc.
#include "discover/ibnetdiscover_parser.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/text_io.h"
#include "support/fabric_generator.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

// Every field of the model, so two parses can be compared as text.
std::string Dump(const Fabric& fabric) {
  std::string out = fabric.source + "\n";
  for (const FabricNode& n : fabric.nodes) {
    out += fmt::format("{} {} sys={} ports={} \"{}\"\n", NodeTypeName(n.type), FormatGuid(n.guid),
                       FormatGuid(n.system_guid), n.num_ports, n.description);
    for (const FabricPort& p : n.ports)
      out += fmt::format("  [{}] pg={} lid={} {}/{} state={} -> {}\n", p.number, FormatGuid(p.port_guid), p.lid,
                         p.width, p.speed, p.state,
                         p.remote ? fmt::format("{}[{}]", FormatGuid(p.remote->node_guid), p.remote->port) : "-");
  }
  return out;
}

// Record lines counted without the parser: lines that start with the type word.
std::pair<int, int> CountRecordLines(const std::string& text) {
  int switches = 0, cas = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Switch\t", 0) == 0 || line.rfind("Switch ", 0) == 0) ++switches;
    if (line.rfind("Ca\t", 0) == 0 || line.rfind("Ca ", 0) == 0) ++cas;
  }
  return {switches, cas};
}

// Every cable is on both of its ends and ports are sorted.
void ExpectSymmetric(const Fabric& fabric) {
  for (const FabricNode& n : fabric.nodes) {
    for (size_t i = 0; i < n.ports.size(); ++i) {
      const FabricPort& p = n.ports[i];
      if (i > 0) {
        EXPECT_LT(n.ports[i - 1].number, p.number) << FormatGuid(n.guid);
      }
      ASSERT_TRUE(p.remote) << FormatGuid(n.guid) << "[" << p.number << "]";
      const FabricNode* peer = fabric.FindNode(p.remote->node_guid);
      ASSERT_NE(peer, nullptr);
      const FabricPort* back = peer->FindPort(p.remote->port);
      ASSERT_NE(back, nullptr) << FormatGuid(peer->guid) << "[" << p.remote->port << "]";
      ASSERT_TRUE(back->remote);
      EXPECT_EQ(*back->remote, (PortRef{n.guid, p.number}));
    }
  }
}

// A real dump from tests/data/ibnet; a missing file fails the test.
std::string ReadDump(const std::string& name) {
  Result<std::string> text = ReadTextFile(topolaunch::testing::TestDataDir() + "/ibnet/" + name);
  if (!text) ADD_FAILURE() << text.error().Message();
  return text ? *text : std::string();
}

struct DumpCase {
  std::string file;
  int switches, cas;  // from SANITY.md / SOURCES.md (ibsim rediscovery)
};

class RealDumps : public ::testing::TestWithParam<DumpCase> {};

TEST_P(RealDumps, NodeCountsMatchRecordsAndIbsim) {
  const DumpCase& c = GetParam();
  std::string text = ReadDump(c.file);
  ASSERT_FALSE(text.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(text, c.file);
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  int switches = 0, cas = 0;
  for (const FabricNode& n : fabric->nodes) (n.type == NodeType::kSwitch ? switches : cas)++;
  EXPECT_EQ(switches, c.switches);
  EXPECT_EQ(cas, c.cas);
  EXPECT_EQ(CountRecordLines(text), std::make_pair(c.switches, c.cas));
  EXPECT_EQ(fabric->source, "ibnetdiscover");
  ExpectSymmetric(*fabric);
}

INSTANTIATE_TEST_SUITE_P(TestData, RealDumps,
                         ::testing::Values(DumpCase{"stage-cluster-2014-sx6036-fdr10-8sw-144ca.ibnet", 8, 144},
                                           DumpCase{"psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet", 11, 89},
                                           DumpCase{"nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet", 2, 13},
                                           DumpCase{"quantum-hdr-2019-60sw-2ca-crlf.ibnet", 60, 2},
                                           DumpCase{"doc-manpage-ibnetdiscover-2sw-4ca.ibnet", 2, 4},
                                           DumpCase{"doc-nvidia-ibdiagpath-2sw-6ca.ibnet", 2, 6},
                                           DumpCase{"gb200-isolated-single-ca-0sw-1ca.ibnet", 0, 1}),
                         [](const ::testing::TestParamInfo<DumpCase>& info) {
                           std::string name = info.param.file.substr(0, info.param.file.find('-', 4));
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name + std::to_string(info.index);
                         });

TEST(RealDumpFacts, NvidiaLabSharpNodeLoopbacksAndLids) {
  std::string text = ReadDump("nvidia-lab-2021-qm8700-sx6036-sharp-2sw-13ca.ibnet");
  ASSERT_FALSE(text.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(text, "lab");
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  const FabricNode* sharp = fabric->FindNode(0xb8599f0300fc6dec);
  ASSERT_NE(sharp, nullptr);
  EXPECT_EQ(sharp->type, NodeType::kCa);
  EXPECT_EQ(sharp->description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(sharp->system_guid, Guid{0xb8599f0300fc6de4});
  ASSERT_EQ(sharp->ports.size(), 1u);
  EXPECT_EQ(sharp->ports[0].lid, 14);
  EXPECT_EQ(sharp->ports[0].port_guid, Guid{0xb8599f0300fc6dec});
  EXPECT_EQ(sharp->ports[0].remote, (PortRef{0xb8599f0300fc6de4, 41}));
  EXPECT_EQ(sharp->ports[0].width + sharp->ports[0].speed, "4XHDR");
  const FabricNode* quantum = fabric->FindNode(0xb8599f0300fc6de4);
  ASSERT_NE(quantum, nullptr);
  EXPECT_EQ(quantum->description, "MF0;r-ufm-sw95:MQM8700/U1");
  EXPECT_EQ(quantum->num_ports, 41);
  ASSERT_NE(quantum->FindPort(41), nullptr);
  EXPECT_EQ(quantum->FindPort(41)->lid, 13);  // a switch port carries the switch's LID
  const FabricNode* sx = fabric->FindNode(0x2c903007b78b0);
  ASSERT_NE(sx, nullptr);
  EXPECT_EQ(sx->FindPort(25)->remote, (PortRef{0x2c903007b78b0, 26}));  // loop-back cable
  EXPECT_EQ(sx->FindPort(25)->speed, "FDR10");
  const FabricNode* hca2 = fabric->FindNode(0xec0d9a03007d7d0b);
  ASSERT_NE(hca2, nullptr);
  EXPECT_EQ(hca2->description, "r-dcs96 HCA-2");
  EXPECT_EQ(hca2->FindPort(1)->lid, 28);  // "# lid 28 lmc 0 ..." is the CA's own LID
}

TEST(RealDumpFacts, ManpageExampleKeepsEachSidesWidth) {
  std::string text = ReadDump("doc-manpage-ibnetdiscover-2sw-4ca.ibnet");
  ASSERT_FALSE(text.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(text, "man");
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  const FabricNode* isr = fabric->FindNode(0x5442ba00003080);
  ASSERT_NE(isr, nullptr);
  EXPECT_EQ(isr->description, "ISR9024 Voltaire");
  EXPECT_EQ(isr->num_ports, 24);
  EXPECT_EQ(isr->FindPort(10)->width, "4X");
  EXPECT_EQ(fabric->FindNode(0x8f10400410015)->FindPort(1)->width, "1X");
  const FabricNode* dual = fabric->FindNode(0x8f10403960558);
  ASSERT_NE(dual, nullptr);
  ASSERT_EQ(dual->ports.size(), 2u);
  EXPECT_EQ(dual->ports[0].port_guid, Guid{0x8f10403960559});
  EXPECT_EQ(dual->ports[0].lid, 10);
  EXPECT_EQ(dual->ports[1].lid, 14);
  EXPECT_EQ(dual->ports[1].remote, (PortRef{0x5442ba00003080, 8}));
}

TEST(RealDumpFacts, HashInsideDescriptionAndJunkFirstLine) {
  std::string psmn = ReadDump("psmn-x5-2020-voltaire4036-qdr-11sw-89ca.ibnet");
  std::string nvidia = ReadDump("doc-nvidia-ibdiagpath-2sw-6ca.ibnet");
  ASSERT_FALSE(psmn.empty() || nvidia.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(psmn, "psmn");
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  EXPECT_EQ(fabric->FindNode(0x8f10500108c5c)->description, "Voltaire 4036 # 4036-8C5C");
  ASSERT_EQ(nvidia.rfind("src/query_smp.c", 0), 0u) << "the file should open with a tool warning";
  Result<Fabric> with_junk = ParseIbnetdiscover(nvidia, "nvidia");
  ASSERT_TRUE(with_junk.ok()) << with_junk.error().Message();
  EXPECT_EQ(with_junk->FindNode(0xe41d2d030003e470)->FindPort(1)->remote, (PortRef{0xe41d2d030003e470, 2}));
}

TEST(RealDumpFacts, Gb200SingleCaWithoutLinks) {
  std::string text = ReadDump("gb200-isolated-single-ca-0sw-1ca.ibnet");
  ASSERT_FALSE(text.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(text, "gb200");
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  ASSERT_EQ(fabric->nodes.size(), 1u);
  EXPECT_EQ(fabric->nodes[0].guid, Guid{0xb8e92403009ca838});
  EXPECT_EQ(fabric->nodes[0].description, "dgx-gb200-n01-c1 HCA-1");
  EXPECT_TRUE(fabric->nodes[0].ports.empty());
}

std::string WithoutCr(std::string text) {
  std::erase(text, '\r');
  return text;
}

TEST(RealDumpFacts, CrlfBomAndJunkPrefixParseLikeThePlainFile) {
  std::string crlf = ReadDump("quantum-hdr-2019-60sw-2ca-crlf.ibnet");
  std::string man = ReadDump("doc-manpage-ibnetdiscover-2sw-4ca.ibnet");
  ASSERT_FALSE(crlf.empty() || man.empty());
  ASSERT_NE(crlf.find("\r\n"), std::string::npos);
  Result<Fabric> with_cr = ParseIbnetdiscover(crlf, "q");
  Result<Fabric> without_cr = ParseIbnetdiscover(WithoutCr(crlf), "q");
  ASSERT_TRUE(with_cr.ok() && without_cr.ok());
  EXPECT_EQ(Dump(*with_cr), Dump(*without_cr));
  EXPECT_EQ(with_cr->FindNode(0x98039b030067261c)->description, "fit101 HCA-1");  // no trailing \r

  Result<Fabric> plain = ParseIbnetdiscover(man, "m");
  Result<Fabric> bom = ParseIbnetdiscover("\xEF\xBB\xBF" + man, "m");
  Result<Fabric> junk = ParseIbnetdiscover("ibwarn: [123] mad_rpc: _do_madrpc failed\nsome banner = 3\n" + man, "m");
  ASSERT_TRUE(plain.ok() && bom.ok() && junk.ok());
  EXPECT_EQ(Dump(*bom), Dump(*plain));
  EXPECT_EQ(Dump(*junk), Dump(*plain));
}

TEST(RealDumpFacts, PortsReportIsRecognized) {
  std::string text = ReadDump("plafrim-2016-voltaire-qdr-ibnetdiscover-sp-ports-report.txt");
  ASSERT_FALSE(text.empty());
  Result<Fabric> fabric = ParseIbnetdiscover(text, "plafrim.txt");
  ASSERT_FALSE(fabric.ok());
  EXPECT_EQ(fabric.error().code, ErrorCode::kBadInput);
  EXPECT_EQ(fabric.error().problems.front().where, "plafrim.txt:1");
  EXPECT_NE(fabric.error().Message().find("`ibnetdiscover -p` ports report, not a topology dump"), std::string::npos)
      << fabric.error().Message();
}

// Its speed is bench/discover_bench's figure (target < 0.3 s), not a timed
// test: under ASan or a loaded CI machine a time limit here only flakes.
TEST(LargeDump, FourMegabytesParseToEveryNode) {
  topolaunch::testing::FatTreeSpec spec;
  spec.leaves = 250;
  spec.hosts_per_leaf = 32;
  spec.spines = 64;
  std::string text = topolaunch::testing::TwoLevelFatTree(spec).netfile;
  ASSERT_GE(text.size(), 4u << 20);
  Result<Fabric> fabric = ParseIbnetdiscover(text, "big");
  ASSERT_TRUE(fabric.ok()) << fabric.error().Message();
  EXPECT_EQ(fabric->nodes.size(), 250u + 64u + 250u * 32u);
}

}  // namespace
}  // namespace topolaunch
