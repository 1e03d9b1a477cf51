// Reading whole files into memory, with errors that name the file.
#pragma once

#include <string>

#include "topolaunch/result.h"

namespace topolaunch {

/// Reads a whole file. Errors: kBadInput naming the file when it does not
/// exist or cannot be read (it was given by the user), with the OS reason.
Result<std::string> ReadTextFile(const std::string& path);

}  // namespace topolaunch
