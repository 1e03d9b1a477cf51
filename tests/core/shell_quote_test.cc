#include "core/shell_quote.h"

#include <gtest/gtest.h>

#include <string>

namespace topolaunch {
namespace {

struct WordCase {
  std::string word;
  std::string typed;
};

class ShellWordTest : public ::testing::TestWithParam<WordCase> {};

// Plain words stay as a person would type them; anything a shell would
// read differently is quoted the one way ShellQuote quotes.
TEST_P(ShellWordTest, QuotesOnlyWhatAShellWouldChange) { EXPECT_EQ(ShellWord(GetParam().word), GetParam().typed); }

INSTANTIATE_TEST_SUITE_P(
    Table, ShellWordTest,
    ::testing::Values(WordCase{"topology.json", "topology.json"}, WordCase{"/srv/fabric-2/ib.net", "/srv/fabric-2/ib.net"},
                      WordCase{"a=b,c:d@e%f+g", "a=b,c:d@e%f+g"}, WordCase{"", "''"}, WordCase{"two words", "'two words'"},
                      WordCase{"it's", "'it'\\''s'"}, WordCase{"$HOME", "'$HOME'"}, WordCase{"a;b", "'a;b'"},
                      WordCase{"~/x", "'~/x'"}, WordCase{"*.json", "'*.json'"}));

TEST(ShellWord, QuotedFormIsShellQuote) {
  for (std::string word : {"a b", "x'y", "\n", "\"q\""}) EXPECT_EQ(ShellWord(word), ShellQuote(word)) << word;
}

TEST(ShellJoin, QuotesEachArgument) {
  EXPECT_EQ(ShellJoin({"torchrun", "--nnodes=2", "it's"}), "'torchrun' '--nnodes=2' 'it'\\''s'");
  EXPECT_EQ(ShellJoin({}), "");
}

}  // namespace
}  // namespace topolaunch
