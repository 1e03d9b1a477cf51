#include "core/console.h"

#include <fmt/format.h>

namespace topolaunch {

bool PrintTo(std::FILE* stream, std::string_view text) {
  bool ok = std::fwrite(text.data(), 1, text.size(), stream) == text.size();
  return std::fflush(stream) == 0 && ok;
}

int ReportError(const Error& error) {
  for (const Problem& p : error.problems) {
    if (p.where.empty()) PrintTo(stderr, fmt::format("topolaunch: error: {}\n", p.what));
    else PrintTo(stderr, fmt::format("topolaunch: error: {}: {}\n", p.where, p.what));
  }
  return ExitStatusFor(error.code);
}

void Note(std::string_view text) { PrintTo(stderr, fmt::format("topolaunch: note: {}\n", text)); }

}  // namespace topolaunch
