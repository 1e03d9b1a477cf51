// Where a program name would run from: the PATH search execvp does, for
// the preflight ("is torchrun there?") and `bind` ("which numactl?").
#pragma once

#include <string>

namespace topolaunch {

/// The path `name` would run as, or "" when none: a name holding '/' is
/// checked as it is; otherwise each PATH entry is tried in order (an empty
/// entry is the current folder, as for execvp). Folders do not count.
std::string FindProgram(const std::string& name);

}  // namespace topolaunch
