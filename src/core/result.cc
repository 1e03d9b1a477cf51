#include "topolaunch/result.h"

namespace topolaunch {

std::string Error::Message() const {
  std::string out;
  for (const Problem& p : problems) {
    if (!out.empty()) out += '\n';
    out += p.where.empty() ? p.what : p.where + ": " + p.what;
  }
  return out;
}

int ExitStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadUsage:
    case ErrorCode::kBadInput:
      return 2;
    case ErrorCode::kUnavailable:
    case ErrorCode::kTimeout:
    case ErrorCode::kInternal:
      return 3;
  }
  return 3;
}

}  // namespace topolaunch
