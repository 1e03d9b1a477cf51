#include "run/script_words.h"

#include <gtest/gtest.h>

namespace topolaunch::run {
namespace {

const std::vector<std::string> kOptions = {"--dry-run", "--nnodes", "-N", "--nproc-per-node", "--no-gpus"};

struct WordsCase {
  std::vector<std::string> words;
  std::string error;  ///< "" when the words are fine, else a part of the message
};

class CheckScriptWordsTest : public ::testing::TestWithParam<WordsCase> {};

TEST_P(CheckScriptWordsTest, OnlyInterpreterFlagsStandBeforeTheScript) {
  Status checked = CheckScriptWords(GetParam().words, kOptions);
  if (GetParam().error.empty()) {
    EXPECT_TRUE(checked.ok()) << checked.error().Message();
    return;
  }
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, ErrorCode::kBadUsage);
  EXPECT_NE(checked.error().Message().find(GetParam().error), std::string::npos) << checked.error().Message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckScriptWordsTest,
    ::testing::Values(
        WordsCase{{"train.py", "--dry-run", "-N", "2"}, ""},  // the script's own, byte for byte
        WordsCase{{"-u", "train.py"}, ""}, WordsCase{{"-uB", "-X", "dev", "-Wignore", "train.py", "--lr"}, ""},
        WordsCase{{"-m", "torch.utils.collect_env"}, ""}, WordsCase{{"-mtorch.utils.collect_env"}, ""},
        WordsCase{{"-c", "print(1)", "x"}, ""}, WordsCase{{"-"}, ""},
        WordsCase{{"--dryrun", "train.py"}, "unknown option --dryrun before SCRIPT (did you mean --dry-run?)"},
        WordsCase{{"-Q", "2", "train.py"}, "unknown option -Q before SCRIPT;"},
        WordsCase{{"-u", "--nnode", "2", "train.py"}, "unknown option --nnode before SCRIPT (did you mean --nnodes?)"},
        WordsCase{{"--rdzv-endpoint", "h:29500", "train.py"}, "unknown option --rdzv-endpoint"},
        WordsCase{{"-m"}, "-m needs its argument"}, WordsCase{{"-X"}, "-X needs its argument"},
        WordsCase{{"-u"}, "no SCRIPT given"}, WordsCase{{}, "no SCRIPT given"}));

}  // namespace
}  // namespace topolaunch::run
