// The top level of the command line: a mistyped command is named with the
// nearest real one (CLI11 alone said "A subcommand is required"), and -V is
// --version, as in most tools.
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace topolaunch::testing {
namespace {

TEST(MainCli, AMistypedCommandIsNamedWithTheNearestOne) {
  ProcessResult r = RunTopolaunch({"dicsover", "--format", "text"});
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("topolaunch: error: unknown command 'dicsover' (did you mean discover?)"), std::string::npos) << r.err;

  ProcessResult far = RunTopolaunch({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2) << far.Describe();
  EXPECT_NE(far.err.find("topolaunch: error: unknown command 'frobnicate'\n"), std::string::npos) << far.err;
}

TEST(MainCli, DashCapitalVIsVersion) {
  ProcessResult short_form = RunTopolaunch({"-V"});
  ProcessResult long_form = RunTopolaunch({"--version"});
  EXPECT_EQ(short_form.exit_code, 0) << short_form.Describe();
  EXPECT_EQ(short_form.out, long_form.out);
  EXPECT_EQ(short_form.out.rfind("topolaunch ", 0), 0u) << short_form.out;
}

}  // namespace
}  // namespace topolaunch::testing
