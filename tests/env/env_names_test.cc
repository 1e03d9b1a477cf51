#include "env/env_names.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "support/test_paths.h"

namespace topolaunch {
namespace {

// The names NCCL reads (tests/data/nccl/SOURCES.md says where they come from).
TEST(EnvNames, NcclPartEqualsTheListNcclReads) {
  const std::string file = testing::TestDataDir() + "/nccl/nccl-real-names.txt";
  std::ifstream in(file);
  ASSERT_TRUE(in) << file << " is missing";
  std::set<std::string> nccl_reads;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) nccl_reads.insert(line);
  ASSERT_FALSE(nccl_reads.empty()) << file << " is empty";
  std::set<std::string> ours;
  for (std::string_view name : RealVariableNames())
    if (name.starts_with("NCCL_")) ours.insert(std::string(name));
  for (const std::string& name : ours) EXPECT_TRUE(nccl_reads.count(name)) << name << " is listed but NCCL does not read it";
  for (const std::string& name : nccl_reads) EXPECT_TRUE(ours.count(name)) << name << " is read by NCCL but missing";
}

TEST(EnvNames, EveryListedNameIsFoundByLookup) {
  for (std::string_view name : RealVariableNames()) EXPECT_TRUE(IsRealVariableName(name)) << name;
  EXPECT_TRUE(IsRealVariableName("TORCH_NCCL_ASYNC_ERROR_HANDLING"));
  EXPECT_TRUE(IsRealVariableName("CUDA_DEVICE_ORDER"));
  EXPECT_FALSE(IsRealVariableName("NCCL_IB_ENABLE"));
  EXPECT_FALSE(IsRealVariableName(""));
}

TEST(EnvNames, WrongNamesAreNotRealAndPointToRealOnes) {
  std::set<std::string_view> wrong;
  for (const WrongName& w : WrongVariableNames()) {
    wrong.insert(w.name);
    EXPECT_FALSE(IsRealVariableName(w.name)) << w.name;
    if (!w.right.empty()) {
      EXPECT_TRUE(IsRealVariableName(w.right)) << w.right;
    }
  }
  for (std::string_view name : {"NCCL_TIMEOUT", "NCCL_IB_QPS_PER_PORT", "NCCL_IB_BUFFER_SIZE", "NCCL_ASYNC_ERROR_HANDLING",
                                "NCCL_BLOCKING_WAIT", "NCCL_IB_GDR_LEVEL"})
    EXPECT_TRUE(wrong.count(name)) << name;
}

TEST(EnvNames, ExplainUnknownName) {
  struct Case { const char* name; const char* expected; };
  const Case cases[] = {
      {"NCCL_IB_QPS_PER_PORT", "the real variable is NCCL_IB_QPS_PER_CONNECTION"},
      {"NCCL_IB_BUFFER_SIZE", "the real variable is NCCL_BUFFSIZE"},
      {"NCCL_ASYNC_ERROR_HANDLING", "the real variable is TORCH_NCCL_ASYNC_ERROR_HANDLING"},
      {"NCCL_IB_GDR_LEVEL", "the real variable is NCCL_NET_GDR_LEVEL"},
      {"NCCL_TIMEOUT", "init_process_group(timeout=...)"},
      {"NCCL_IB_HCAS", "did you mean NCCL_IB_HCA?"},
      {"NCCL_SOCKET_IFACE", "neither NCCL nor PyTorch reads it"},
  };
  for (const Case& c : cases) {
    std::optional<std::string> why = ExplainUnknownName(c.name);
    ASSERT_TRUE(why) << c.name;
    EXPECT_NE(why->find(c.expected), std::string::npos) << c.name << ": " << *why;
  }
  EXPECT_FALSE(ExplainUnknownName("NCCL_IB_HCA"));
  EXPECT_TRUE(LooksLikeNcclName("TORCH_NCCL_X"));
  EXPECT_FALSE(LooksLikeNcclName("CUDA_VISIBLE_DEVICES"));
}

}  // namespace
}  // namespace topolaunch
