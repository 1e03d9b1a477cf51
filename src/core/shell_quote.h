// Words for a POSIX shell: the one place topolaunch quotes. Remote commands
// (sshd hands the exec string to `$SHELL -c`), `env --format sh` exports,
// `run --dry-run`'s listing and the commands our messages suggest all quote
// through here.
//
// Inside '...' the shell interprets nothing, and a single quote itself is
// written '\'' (close, escaped quote, reopen). That carries any byte except
// NUL through unchanged: spaces, quotes, `$`, `;`, backslashes, newlines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

/// One argument quoted for a POSIX shell: `'...'`, with `'` as `'\''`.
/// The empty string becomes `''`.
std::string ShellQuote(std::string_view argument);

/// The arguments quoted and joined by single spaces.
std::string ShellJoin(const std::vector<std::string>& argv);

/// `word` as a user would type it in a shell: as it is when it holds only
/// letters, digits and ._/-+=:,@%, else ShellQuote'd. For commands shown
/// to people; a command that runs uses ShellQuote.
std::string ShellWord(std::string_view word);

}  // namespace topolaunch
