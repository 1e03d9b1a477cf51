// ParseIbnetdiscover on small hand-made texts: the forms the format allows
// (ibsim net files, -g chassis output, one-sided cables) and every kind of
// bad input, each checked for its error code and its file:line.
#include <gtest/gtest.h>

#include <string>

#include "discover/ibnetdiscover_parser.h"

namespace topolaunch {
namespace {

// A switch with one host and one record each, as ibnetdiscover prints them.
const char* const kSwitchRecord =
    "vendid=0x2c9\n"
    "devid=0xd2f0\n"
    "sysimgguid=0xa01\n"
    "switchguid=0xa01(a01)\n"
    "Switch\t40 \"S-0000000000000a01\"\t\t# \"leaf01\" enhanced port 0 lid 7 lmc 0\n"
    "[3]\t\"H-0000000000000b01\"[1](b02) \t\t# \"node01 mlx5_0\" lid 9 4xHDR\n";
const char* const kCaRecord =
    "\nvendid=0x2c9\n"
    "devid=0x101b\n"
    "caguid=0xb01\n"
    "Ca\t1 \"H-0000000000000b01\"\t\t# \"node01 mlx5_0\"\n"
    "[1](b02) \t\"S-0000000000000a01\"[3]\t\t# lid 9 lmc 0 \"leaf01\" lid 7 4xHDR\n";

Fabric ParseOk(const std::string& text) {
  Result<Fabric> fabric = ParseIbnetdiscover(text, "t.ibnet");
  EXPECT_TRUE(fabric.ok()) << fabric.error().Message();
  return fabric.ok() ? std::move(fabric).value() : Fabric{};
}

TEST(IbnetdiscoverForms, BothSidesListed) {
  Fabric f = ParseOk(std::string(kSwitchRecord) + kCaRecord);
  ASSERT_EQ(f.nodes.size(), 2u);
  const FabricPort* sw = f.nodes[0].FindPort(3);
  const FabricPort* ca = f.nodes[1].FindPort(1);
  ASSERT_TRUE(sw && ca);
  EXPECT_EQ(sw->remote, (PortRef{0xb01, 1}));
  EXPECT_EQ(ca->remote, (PortRef{0xa01, 3}));
  EXPECT_EQ(sw->lid, 7);
  EXPECT_EQ(ca->lid, 9);
  EXPECT_EQ(ca->port_guid, Guid{0xb02});
  EXPECT_EQ(f.nodes[0].system_guid, Guid{0xa01});
  EXPECT_EQ(f.nodes[1].system_guid, Guid{0});  // no sysimgguid= line
}

TEST(IbnetdiscoverForms, CableListedOnlyBySwitchGetsItsCaEnd) {
  std::string ca_without_ports = "\ncaguid=0xb01\nCa\t1 \"H-0000000000000b01\"\t\t# \"node01 mlx5_0\"\n";
  Fabric f = ParseOk(std::string(kSwitchRecord) + ca_without_ports);
  ASSERT_EQ(f.nodes.size(), 2u);
  const FabricPort* ca = f.nodes[1].FindPort(1);
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(ca->remote, (PortRef{0xa01, 3}));
  EXPECT_EQ(ca->lid, 9);                  // from the switch's comment
  EXPECT_EQ(ca->port_guid, Guid{0xb02});  // from the switch's "(b02)"
  EXPECT_EQ(ca->width + ca->speed, "4XHDR");
}

TEST(IbnetdiscoverForms, CableListedOnlyByCaGetsItsSwitchEnd) {
  std::string switch_without_ports =
      "switchguid=0xa01(a01)\nSwitch\t40 \"S-0000000000000a01\"\t\t# \"leaf01\" enhanced port 0 lid 7 lmc 0\n";
  Fabric f = ParseOk(switch_without_ports + kCaRecord);
  const FabricPort* sw = f.nodes[0].FindPort(3);
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->remote, (PortRef{0xb01, 1}));
  EXPECT_EQ(sw->lid, 7);
}

TEST(IbnetdiscoverForms, LoopbackListedOnOneSide) {
  Fabric f = ParseOk("Switch 8 \"S-0a01\" # \"sw\" base port 0 lid 1 lmc 0\n[5] \"S-0a01\"[6] # \"sw\" lid 1 4xEDR\n");
  ASSERT_EQ(f.nodes[0].ports.size(), 2u);
  EXPECT_EQ(f.nodes[0].ports[0].remote, (PortRef{0xa01, 6}));
  EXPECT_EQ(f.nodes[0].ports[1].number, 6);
  EXPECT_EQ(f.nodes[0].ports[1].remote, (PortRef{0xa01, 5}));
}

// ibsim's own examples: Hca, ids that are names, an omitted remote port, w=.
TEST(IbnetdiscoverForms, IbsimNetFileGetsIbsimsGuidsAndNames) {
  Fabric f = ParseOk(
      "# ibsim style\nSwitch\t8 \"Switch1\"\n[1]\t\"Hca1\"[1]\n[2]\t\"Hca2\"\tw=2\n\n"
      "Hca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n\nHca\t2 \"Hca2\"\n[1]\t\"Switch1\"[2]\n");
  ASSERT_EQ(f.nodes.size(), 3u);
  EXPECT_EQ(f.nodes[0].guid, Guid{0x200000});
  EXPECT_EQ(f.nodes[1].guid, Guid{0x100000});
  EXPECT_EQ(f.nodes[2].guid, Guid{0x100003});  // each CA reserves ports + 1 GUIDs
  EXPECT_EQ(f.nodes[1].description, "Hca1");
  EXPECT_EQ(f.nodes[0].FindPort(2)->remote, (PortRef{0x100003, 1}));
  EXPECT_EQ(f.nodes[2].FindPort(1)->port_guid, Guid{0x100004});  // ibsim: CA GUID + port
}

TEST(IbnetdiscoverForms, GroupedOutputAndUnknownSpeeds) {
  Fabric f = ParseOk(
      "Chassis 1 (guid 0x8f104004121fa)\n\n# Spine Nodes\n"
      "sysimgguid=0x8f104004121fa\t\t# Chassis 1 (ISR9288)\n"
      "switchguid=0x8f104004121fa(8f104004121fa)\t# ISR9288/ISR9096 Spine 1 Chip 1\n"
      "Switch\t24 \"S-0008f104004121fa\"\t\t# \"ISR9288/ISR9096 Voltaire sFB-12D\" base port 0 lid 64 lmc 0\n"
      "[1][ext 7]\t\"H-0000000000000b01\"[1](b02) \t\t# \"node01 mlx5_0\" lid 9 4x???\n"
      "\nNon-Chassis Nodes\n\ndo echo hello\n"
      "caguid=0xb01\nCa\t1 \"H-0000000000000b01\"\t\t# \"node01 mlx5_0\"\n"
      "  [1](b02) \t\"S-0008f104004121fa\"[1][ext 7]\t\t# lid 9 lmc 0 \"x\" lid 64 ??SDR s=1 w=2 v=4\n");
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[0].system_guid, Guid{0x8f104004121fa});
  EXPECT_EQ(f.nodes[0].FindPort(1)->speed, "");
  EXPECT_EQ(f.nodes[1].FindPort(1)->remote, (PortRef{0x8f104004121fa, 1}));
}

struct BadCase {
  std::string name;
  std::string text;
  std::string where;  // of the first problem
  std::string what;   // a part of its message
};

class IbnetdiscoverBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(IbnetdiscoverBadInput, IsBadInputNamingFileAndLine) {
  const BadCase& c = GetParam();
  Result<Fabric> fabric = ParseIbnetdiscover(c.text, "bad.ibnet");
  ASSERT_FALSE(fabric.ok());
  EXPECT_EQ(fabric.error().code, ErrorCode::kBadInput);
  ASSERT_FALSE(fabric.error().problems.empty());
  EXPECT_EQ(fabric.error().problems.front().where, c.where) << fabric.error().Message();
  EXPECT_NE(fabric.error().problems.front().what.find(c.what), std::string::npos) << fabric.error().Message();
}

const std::string kSw(kSwitchRecord), kCa(kCaRecord);

INSTANTIATE_TEST_SUITE_P(
    Cases, IbnetdiscoverBadInput,
    ::testing::Values(
        BadCase{"Empty", "", "bad.ibnet", "no Switch/Ca records found"},
        BadCase{"OnlyComments", "#\n# Topology file\n\n", "bad.ibnet", "no Switch/Ca records found"},
        BadCase{"Binary", std::string("\x01\x00\x02\x03garbage", 11), "bad.ibnet", "binary data"},
        BadCase{"GarbageAfterRecord", kSw + "hello world\n" + kCa, "bad.ibnet:7", "unrecognized line \"hello world\""},
        BadCase{"RecordCutInId", "vendid=0x2c9\nSwitch\t36 \"S-0002c9030", "bad.ibnet:2", "quoted node id"},
        BadCase{"RecordCutInDescription", kSw + "caguid=0xb01\nCa\t1 \"H-0000000000000b01\"\t\t# \"node01 mlx",
                "bad.ibnet:8", "no closing quote"},
        BadCase{"PortCutInComment", kSw + kCa.substr(0, kCa.size() - 20), "bad.ibnet:12", "cut short"},
        BadCase{"PortCutInSpeed", kSw + kCa.substr(0, kCa.size() - 3), "bad.ibnet:12", "bad link width/speed \"4xH\""},
        BadCase{"PortCutAfterPortNumber", kSw + "[4]\t\"S-00", "bad.ibnet:7", "peer's quoted node id"},
        BadCase{"HeaderWithoutRecord", kSw + kCa + "\nvendid=0x2c9\ndevid=0x101b\n", "bad.ibnet:14",
                "not followed by a Switch/Ca record"},
        BadCase{"PortBeforeAnyRecord", "[1]\t\"S-0a01\"[1]\n" + kSw + kCa, "bad.ibnet:1", "port line outside a record"},
        BadCase{"BadGuidInId", "Switch\t36 \"S-00zz\"\t\t# \"x\" base port 0 lid 1 lmc 0\n", "bad.ibnet:1",
                "bad GUID in node id \"S-00zz\""},
        BadCase{"BadGuidLine", "caguid=0xnothex\nCa 1 \"H-0b01\" # \"n\"\n", "bad.ibnet:1",
                "bad GUID in \"caguid=0xnothex\""},
        BadCase{"NoPortCount", "Switch \"S-0a01\"\n", "bad.ibnet:1", "number of ports"},
        BadCase{"NodeList", "Switch\t : 0x0002c90300a1b2c3 ports 36 devid 0xc738 vendid 0x2c9 \"x\"\n", "bad.ibnet:1",
                "`ibnetdiscover -l` node list"},
        BadCase{"DanglingLink", kSw, "bad.ibnet:6",
                "\"H-0000000000000b01\" (GUID 0x0000000000000b01), which has no record"},
        BadCase{"DuplicateNode", kSw + kCa + "\n" + kSw, "bad.ibnet:18",
                "duplicate node \"S-0000000000000a01\": "
                "already defined at bad.ibnet:5"},
        BadCase{"DuplicateGuid", kSw + kCa + "\ncaguid=0xb01\nCa 1 \"H-0000000000000bbb\" # \"other\"\n",
                "bad.ibnet:15", "duplicate node GUID 0x0000000000000b01"},
        BadCase{"PortOutOfRange", kSw + "[41]\t\"S-0a01\"[1]\n", "bad.ibnet:7", "port 41 is out of range"},
        BadCase{"PortListedTwice", kSw + "[3]\t\"S-0a01\"[1]\n", "bad.ibnet:7", "listed twice (first at bad.ibnet:6)"},
        BadCase{"RemotePortOutOfRange", kSw + "[4]\t\"H-0000000000000b01\"[9]\n" + kCa, "bad.ibnet:7",
                "is cabled to port 9 of \"H-0000000000000b01\", which has only 1 ports"},
        BadCase{"LinkNotReciprocated",
                "Switch 8 \"S-0a01\"\n[1] \"H-0b01\"[1]\n[2] \"H-0b01\"[1]\nCa 1 \"H-0b01\"\n[1] \"S-0a01\"[2]\n",
                "bad.ibnet:2", "which bad.ibnet:5 cables to port 2 of \"S-0a01\" instead"},
        BadCase{"IncludeDirective", "include \"other.net\"\n" + kSw + kCa, "bad.ibnet:1", "not supported"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(IbnetdiscoverBadInput, ReportsEveryProblemUpToACap) {
  std::string text = kSw + kCa;
  for (int i = 0; i < 30; ++i) text += "garbage line " + std::to_string(i) + "\n";
  Result<Fabric> fabric = ParseIbnetdiscover(text, "bad.ibnet");
  ASSERT_FALSE(fabric.ok());
  const std::vector<Problem>& problems = fabric.error().problems;
  ASSERT_EQ(problems.size(), 21u);
  EXPECT_EQ(problems[0].where, "bad.ibnet:13");
  EXPECT_EQ(problems[19].where, "bad.ibnet:32");
  EXPECT_EQ(problems[20].what, "... and 10 more problems");
}

TEST(IbnetdiscoverBadInput, SeveralDifferentProblemsAtOnce) {
  std::string text = kSw + "[3]\t\"S-0a01\"[1]\n" + kCa + "[7]\t\"S-0000000000000a01\"[1]\n";
  Result<Fabric> fabric = ParseIbnetdiscover(text, "bad.ibnet");
  ASSERT_FALSE(fabric.ok());
  ASSERT_EQ(fabric.error().problems.size(), 2u) << fabric.error().Message();
  EXPECT_EQ(fabric.error().problems[0].where, "bad.ibnet:7");
  EXPECT_EQ(fabric.error().problems[1].where, "bad.ibnet:14");
}

}  // namespace
}  // namespace topolaunch
