// Text from other machines made safe to print on a terminal.
//
// A node's output is the script's, the shell's and the node's: any byte can
// arrive. Control characters would reach the user's terminal as commands
// (escape sequences can move the cursor, retitle the window, rewrite what
// was printed, or on some terminals answer back), so `run` shows them the
// way `cat -v` does: a C0 control (except tab) as ^X, DEL as ^?, a C1
// control (U+0080..U+009F) as <U+009B>. Everything else is kept, also bytes
// that are not UTF-8 (the terminal shows those as it will).
#pragma once

#include <string>
#include <string_view>

namespace topolaunch {

/// `text` with its control characters made visible (see above).
std::string TerminalSafe(std::string_view text);

}  // namespace topolaunch
