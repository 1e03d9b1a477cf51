#include "core/shell_quote.h"

#include <algorithm>

namespace topolaunch {

std::string ShellQuote(std::string_view argument) {
  std::string out = "'";
  for (char c : argument) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& argument : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(argument);
  }
  return out;
}

std::string ShellWord(std::string_view word) {
  auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._/-+=:,@%").find(c) != std::string_view::npos;
  };
  bool as_is = !word.empty() && std::all_of(word.begin(), word.end(), plain);
  return as_is ? std::string(word) : ShellQuote(word);
}

}  // namespace topolaunch
