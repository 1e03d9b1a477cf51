// Reading whole files into memory, with errors that name the file.
#pragma once

#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

/// Reads a whole file. Errors: kBadInput naming the file when it does not
/// exist or cannot be read (it was given by the user), with the OS reason.
Result<std::string> ReadTextFile(const std::string& path);

/// A line without its surrounding blanks, tabs and carriage returns (CRLF
/// files); the view points into `line`.
inline std::string_view TrimLine(std::string_view line) {
  size_t begin = line.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return line.substr(begin, line.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace topolaunch
