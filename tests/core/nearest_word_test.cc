#include "core/nearest_word.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

const std::vector<std::string> kOptions = {"--dry-run", "--nnodes", "--nproc-per-node", "--hosts", "--hostfile", "--no-gpus"};

TEST(NearestWord, CommonTyposFindTheirOption) {
  EXPECT_EQ(NearestWord("--dryrun", kOptions), "--dry-run");
  EXPECT_EQ(NearestWord("--dyr-run", kOptions), "--dry-run") << "two letters swapped";
  EXPECT_EQ(NearestWord("--nnode", kOptions), "--nnodes");
  EXPECT_EQ(NearestWord("--nproc_per_node", kOptions), "--nproc-per-node") << "torchrun's underscores";
  EXPECT_EQ(NearestWord("--host", kOptions), "--hosts");
}

TEST(NearestWord, NothingNearIsNothing) {
  EXPECT_FALSE(NearestWord("--rdzv-endpoint", kOptions));
  EXPECT_FALSE(NearestWord("-Q", {"--dry-run", "-N"})) << "one letter from every one-letter option";
  EXPECT_FALSE(NearestWord("--x", {}));
}

}  // namespace
}  // namespace topolaunch
