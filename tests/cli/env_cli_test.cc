// `topolaunch env` end to end: formats, --explain, precedence, warnings, exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <regex>

#include "cli/cli_test_util.h"
#include "env/env_test_util.h"
#include "env/nccl_xml_reader.h"
#include "support/topology_samples.h"

namespace topolaunch {
namespace {

using testing::ProcessResult;
using testing::ReadFile;
using testing::RunTopolaunch;

// "export NAME='value'" lines -> map; every name checked against the list.
std::map<std::string, std::string> ParseSh(const std::string& out) {
  std::map<std::string, std::string> values;
  std::regex line("^export ([A-Z0-9_]+)='([^']*)'$");
  std::istringstream in(out);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (std::regex_match(text, m, line)) values[m[1]] = m[2];
    else EXPECT_TRUE(text.starts_with("#")) << "unexpected line: " << text;
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  testing::ExpectOnlyRealNames(names);
  return values;
}

class EnvCli : public ::testing::Test {
 protected:
  void SetUp() override {
    Topology topology = testing::MultiRailTopology();
    HostLayout layout;
    layout.architecture = "x86_64";
    layout.numa_nodes = {{0, 0, {0, 1}, 0}};
    layout.gpus = {{"0000:07:00.0", "nvidia", "", {}, 0, std::nullopt, {}}};
    layout.nics = {{"mlx5_0", "openfabrics", "0000:0c:00.0", {}, 0x2010, 0, std::nullopt},
                   {"mlx5_1", "openfabrics", "0000:0d:00.0", {}, 0x2011, 0, std::nullopt}};
    AttachLayout(topology, "dgx01", layout);
    topology_ = dir_.File("topology.json");
    std::ofstream(topology_) << FormatTopologyJson(topology);
  }
  std::vector<std::string> Args(std::vector<std::string> more) {
    std::vector<std::string> args = {"env", "--topology", topology_, "--host", "dgx01"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  testing::TempDir dir_;
  std::string topology_;
};

TEST_F(EnvCli, ShValuesForARailOptimizedHost) {
  ProcessResult r = RunTopolaunch(Args({}));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::map<std::string, std::string> values = ParseSh(r.out);
  // MultiRailTopology's two rails meet nowhere: NCCL_CROSS_NIC=0.
  EXPECT_EQ(values, (std::map<std::string, std::string>{{"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"},
                                                         {"NCCL_CROSS_NIC", "0"},
                                                         {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                         {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
                                                         {"NCCL_DEBUG", "WARN"}}));
}

TEST_F(EnvCli, ExplainJsonAndDotenv) {
  ProcessResult explain = RunTopolaunch(Args({"--explain"}));
  ASSERT_EQ(explain.exit_code, 0) << explain.Describe();
  EXPECT_NE(explain.out.find("# NCCL_IB_HCA: the 2 port(s) of dgx01 cabled into the discovered fabric"), std::string::npos);
  EXPECT_NE(explain.out.find("[rule, builtin:infiniband.env:7]"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("[template, builtin:infiniband.env:15]"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("# NCCL_SOCKET_IFNAME left unset: computed on"), std::string::npos) << explain.out;
  ParseSh(explain.out);

  ProcessResult json = RunTopolaunch(Args({"--json"}));
  ASSERT_EQ(json.exit_code, 0) << json.Describe();
  nlohmann::json parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["schema"], "topolaunch.env/1");
  EXPECT_EQ(parsed["fabric"], "infiniband");
  std::vector<std::string> names;
  for (const auto& v : parsed["variables"]) names.push_back(v["name"]);
  testing::ExpectOnlyRealNames(names);
  EXPECT_EQ(parsed["variables"][0]["name"], "NCCL_IB_HCA");
  EXPECT_EQ(parsed["variables"][0]["source"], "rule");

  ProcessResult dotenv = RunTopolaunch(Args({"--format", "dotenv"}));
  ASSERT_EQ(dotenv.exit_code, 0) << dotenv.Describe();
  EXPECT_NE(dotenv.out.find("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n"), std::string::npos) << dotenv.out;
}

TEST_F(EnvCli, UserEnvironmentWinsUnlessOverride) {
  ProcessResult r = RunTopolaunch(Args({}), {{"NCCL_IB_HCA", "mlx5_1"}});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(ParseSh(r.out)["NCCL_IB_HCA"], "mlx5_1");
  EXPECT_NE(r.err.find("topolaunch: warning: NCCL_IB_HCA=mlx5_1 from your environment wins"), std::string::npos) << r.err;
  ProcessResult explained = RunTopolaunch(Args({"--explain"}), {{"NCCL_IB_HCA", "mlx5_1"}});
  EXPECT_NE(explained.out.find("[user, environment]"), std::string::npos) << explained.out;
  ProcessResult overridden = RunTopolaunch(Args({"--override"}), {{"NCCL_IB_HCA", "mlx5_1"}});
  ASSERT_EQ(overridden.exit_code, 0) << overridden.Describe();
  EXPECT_EQ(ParseSh(overridden.out)["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1");
}

TEST_F(EnvCli, WarnsAboutNamesNothingReads) {
  ProcessResult r = RunTopolaunch(Args({}), {{"NCCL_TIMEOUT", "1800"}, {"NCCL_IB_QPS_PER_PORT", "4"}});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: warning: your environment sets NCCL_TIMEOUT=1800"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the real variable is NCCL_IB_QPS_PER_CONNECTION"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("NCCL_TIMEOUT"), std::string::npos);
}

TEST_F(EnvCli, NcclTopoFileIsWrittenAndPointedAt) {
  std::string xml_path = dir_.File("nccl-topo.xml");
  ProcessResult r = RunTopolaunch(Args({"--nccl-topo", xml_path}));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(ParseSh(r.out)["NCCL_TOPO_FILE"], xml_path);
  testing::NcclXmlReader reader;
  std::optional<testing::XmlElement> root = reader.Parse(ReadFile(xml_path));
  ASSERT_TRUE(root) << reader.error();
  std::vector<const testing::XmlElement*> nets;
  root->Collect("net", nets);
  EXPECT_EQ(nets.size(), 2u);
  // A host without a layout cannot have one.
  ProcessResult none = RunTopolaunch({"env", "--topology", topology_, "--host", "dgx02", "--nccl-topo", xml_path});
  EXPECT_EQ(none.exit_code, 2) << none.Describe();
  EXPECT_NE(none.err.find("dgx02 has no host layout"), std::string::npos) << none.err;
}

TEST_F(EnvCli, ExitCodes) {
  ProcessResult host = RunTopolaunch({"env", "--topology", topology_, "--host", "nosuch"});
  EXPECT_EQ(host.exit_code, 2) << host.Describe();
  EXPECT_NE(host.err.find("topolaunch: error: --host: nosuch is not in the topology"), std::string::npos) << host.err;
  ProcessResult many = RunTopolaunch({"env", "--topology", topology_});
  EXPECT_EQ(many.exit_code, 2) << many.Describe();
  ProcessResult missing = RunTopolaunch({"env", "--topology", dir_.File("absent.json")});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  ProcessResult format = RunTopolaunch(Args({"--format", "yaml"}));
  EXPECT_EQ(format.exit_code, 2) << format.Describe();

  std::string templates = dir_.File("templates");
  std::filesystem::create_directories(templates);
  std::ofstream(templates + "/infiniband.env") << "NCCL_IB_HCA=@rule\nNCCL_TIMEOUT=1800  # from a blog\n";
  ProcessResult bad = RunTopolaunch(Args({"--templates", templates}));
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("topolaunch: error: " + templates + "/infiniband.env:2: NCCL_TIMEOUT"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty());
}

// This machine has no HCA, so the live walk finds no fabric; a sysfs with
// two active InfiniBand ports (and an active Ethernet front-end port) must
// still give the InfiniBand profile on those two ports, not TCP.
TEST(EnvCliLive, ActiveInfinibandPortsWithoutAWalkableFabricStayInfiniband) {
  testing::TempDir dir;
  std::filesystem::path root = std::filesystem::path(dir.path()) / "infiniband";
  const std::string ll = "fe80:0000:0000:0000:0e42:a1ff:fe00:0001";
  testing::FakePort(root, "mlx5_0", "InfiniBand", "4: ACTIVE", {{0, ll, ""}});
  testing::FakePort(root, "mlx5_1", "InfiniBand", "4: ACTIVE", {{0, ll, ""}});
  testing::FakePort(root, "mlx5_2", "Ethernet", "4: ACTIVE",
                    {{0, ll, "IB/RoCE v1"}, {1, "0000:0000:0000:0000:0000:ffff:0a00:0105", "RoCE v2"}});
  ProcessResult r = RunTopolaunch({"env", "--explain", "--sysfs", root.string()});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::map<std::string, std::string> values = ParseSh(r.out);
  EXPECT_EQ(values["NCCL_IB_HCA"], "=mlx5_0:1,mlx5_1:1") << r.out;
  EXPECT_EQ(values.count("NCCL_IB_DISABLE"), 0u) << r.out;
  EXPECT_NE(r.out.find("in sysfs (its fabric was not discovered"), std::string::npos) << r.out;
}

TEST(EnvCliLive, PlainMachineWorks) {
  ProcessResult r = RunTopolaunch({"env", "--explain"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(ParseSh(r.out)["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
}

}  // namespace
}  // namespace topolaunch
