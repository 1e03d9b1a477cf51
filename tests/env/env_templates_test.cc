#include "env/env_templates.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/text_io.h"
#include "env/env_test_util.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

TEST(EnvTemplates, ParsesRulesLiteralsAndReasons) {
  Result<std::vector<TemplateLine>> lines = ParseEnvTemplate(
      "# comment\n\nNCCL_IB_HCA=@rule\nNCCL_IB_SL=1   # QoS class\nNCCL_DEBUG_SUBSYS=GRAPH,NET#not a comment\n", "t.env");
  ASSERT_TRUE(lines.ok()) << lines.error().Message();
  std::vector<TemplateLine> expected = {{"NCCL_IB_HCA", "@rule", "", "t.env:3"},
                                        {"NCCL_IB_SL", "1", "QoS class", "t.env:4"},
                                        {"NCCL_DEBUG_SUBSYS", "GRAPH,NET#not a comment", "", "t.env:5"}};
  EXPECT_EQ(*lines, expected);
}

TEST(EnvTemplates, RefusesNamesNothingReadsNamingFileLineAndTheRightName) {
  Result<std::vector<TemplateLine>> lines = ParseEnvTemplate(
      "NCCL_DEBUG=WARN\nNCCL_TIMEOUT=1800\nNCCL_IB_QPS_PER_PORT=4\nNCCL_ALGO=@rule\nnot a line\nNCCL_DEBUG=INFO\n", "site.env");
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().code, ErrorCode::kBadInput);
  const std::vector<Problem>& p = lines.error().problems;
  ASSERT_EQ(p.size(), 5u) << lines.error().Message();
  EXPECT_EQ(p[0].where, "site.env:2");
  EXPECT_NE(p[0].what.find("NCCL_TIMEOUT"), std::string::npos);
  EXPECT_EQ(p[1].where, "site.env:3");
  EXPECT_NE(p[1].what.find("NCCL_IB_QPS_PER_CONNECTION"), std::string::npos);
  EXPECT_EQ(p[2].where, "site.env:4");
  EXPECT_NE(p[2].what.find("no rule derives NCCL_ALGO"), std::string::npos);
  EXPECT_EQ(p[3].where, "site.env:5");
  EXPECT_EQ(p[4].where, "site.env:6");
  EXPECT_NE(p[4].what.find("set twice"), std::string::npos);
}

TEST(EnvTemplates, BuiltinCopiesEqualTheFilesInTemplates) {
  std::filesystem::path dir = std::filesystem::path(TOPOLAUNCH_SOURCE_DIR) / "templates" / "env";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.path().extension() == ".env";
  EXPECT_EQ(BuiltinTemplates().size(), files);
  for (const EmbeddedTemplate& builtin : BuiltinTemplates()) {
    Result<std::string> text = ReadTextFile((dir / builtin.file_name).string());
    ASSERT_TRUE(text.ok()) << builtin.file_name;
    EXPECT_EQ(builtin.text, *text) << builtin.file_name << " changed after the build";
  }
}

TEST(EnvTemplates, EveryProfileLoadsAndSetsNoDebugKnob) {
  for (FabricKind kind : {FabricKind::kInfiniband, FabricKind::kRoce, FabricKind::kTcp}) {
    Result<std::vector<TemplateLine>> lines = LoadEnvTemplates("", kind);
    ASSERT_TRUE(lines.ok()) << FabricKindName(kind) << ": " << lines.error().Message();
    for (const TemplateLine& line : *lines) {
      EXPECT_TRUE(IsRealVariableName(line.name)) << line.name;
      for (const char* knob : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_NET_GDR_LEVEL", "NCCL_IB_QPS_PER_CONNECTION"})
        EXPECT_NE(line.name, knob) << FabricKindName(kind);
    }
  }
}

TEST(EnvTemplates, SiteFileInADirectoryWinsOverTheProfile) {
  testing::TempDir dir;
  std::ofstream(dir.File("infiniband.env")) << "NCCL_IB_HCA=@rule\nNCCL_DEBUG=WARN  # quiet\n";
  std::ofstream(dir.File("site.env")) << "NCCL_DEBUG=INFO  # our validation cluster\nNCCL_IB_SL=3\n";
  Result<std::vector<TemplateLine>> lines = LoadEnvTemplates(dir.path(), FabricKind::kInfiniband);
  ASSERT_TRUE(lines.ok()) << lines.error().Message();
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[1].value, "INFO");
  EXPECT_EQ((*lines)[1].origin, dir.File("site.env") + ":1");
  EXPECT_EQ((*lines)[2].name, "NCCL_IB_SL");
  Result<std::vector<TemplateLine>> missing = LoadEnvTemplates(dir.path(), FabricKind::kRoce);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kBadInput);
}

}  // namespace
}  // namespace topolaunch
