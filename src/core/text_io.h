// Reading whole files into memory, with errors that name the file.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// The words of `line` separated by blanks and tabs; the views point into
/// `line`. No quoting (ssh_config's and torchrun's own splitters have theirs).
inline std::vector<std::string_view> BlankSeparatedWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t start = line.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(start, end - start));
    pos = end;
  }
  return words;
}

/// `text` as a decimal number in low..high, digits only (no sign, no
/// blanks); nullopt otherwise.
inline std::optional<long long> DecimalNumber(std::string_view text, long long low, long long high) {
  long long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text.front() == '-' || error != std::errc() || end != text.data() + text.size() || value < low ||
      value > high)
    return std::nullopt;
  return value;
}

}  // namespace topolaunch
