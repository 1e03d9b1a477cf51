#include "core/terminal_text.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

TEST(TerminalSafe, ShowsControlCharactersAsCatVDoes) {
  EXPECT_EQ(TerminalSafe("plain text, tabs\tand UTF-8: caf\xC3\xA9"), "plain text, tabs\tand UTF-8: caf\xC3\xA9");
  // A title change, a cursor move with a clear, a bell: all visible, none acts.
  EXPECT_EQ(TerminalSafe("\x1B]0;owned\x07"), "^[]0;owned^G");
  EXPECT_EQ(TerminalSafe("\x1B[2J\x1B[H"), "^[[2J^[[H");
  EXPECT_EQ(TerminalSafe(std::string("nul\0del\x7F", 8)), "nul^@del^?");
  EXPECT_EQ(TerminalSafe("back\rspace\b"), "back^Mspace^H");
  EXPECT_EQ(TerminalSafe("csi \xC2\x9B" "31m"), "csi <U+009B>31m");
  EXPECT_EQ(TerminalSafe("nbsp \xC2\xA0 stays"), "nbsp \xC2\xA0 stays");
  EXPECT_EQ(TerminalSafe("\xFF\xC2"), "\xFF\xC2");  // not UTF-8: kept, nothing read past the end
}

}  // namespace
}  // namespace topolaunch
