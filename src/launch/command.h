// A command as a value (argv, environment, working directory) and its
// rendering as one POSIX shell command line, for the SSH "exec" request.
//
// sshd hands the exec string to the user's login shell (`$SHELL -c STRING`),
// so every argument is single-quoted (core/shell_quote.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/shell_quote.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// What to run: argv[0] is looked up in PATH on the side that runs it.
struct Command {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env{};  ///< set on top of the inherited environment
  std::string cwd{};                                     ///< empty: the login directory / ours
  std::vector<std::string> unset{};                      ///< names removed from the inherited environment
  bool operator==(const Command&) const = default;
};

/// The command as one shell line: `cd 'CWD' && unset 'N' && export 'K=V' && exec 'ARG0' ...`
/// (parts omitted when empty). Environment values appear in the remote
/// shell's command line, so secrets belong in the agent's stdin message
/// instead. Errors (kBadInput, every problem at once): empty argv, an
/// argument or value holding NUL, an environment name (set or unset) that
/// is not [A-Za-z_][A-Za-z0-9_]*.
Result<std::string> RenderShellCommand(const Command& command);

/// True when `name` is usable as an environment variable name.
bool IsValidEnvName(std::string_view name);

/// Accepts a host to connect to: a host name (IsValidHostName) or an IPv4
/// address; refuses anything else, in particular a leading '-' that ssh-like
/// tools would read as an option. Error: kBadInput naming the host.
Status CheckRemoteHost(std::string_view host);

}  // namespace topolaunch
