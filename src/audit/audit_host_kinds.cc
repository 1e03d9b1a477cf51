#include "audit/audit_host_kinds.h"

#include <cctype>

namespace topolaunch {

std::string HostKind(std::string_view name) {
  std::string kind;
  for (char c : name) {
    bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digit) kind += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (kind.empty() || kind.back() != '#') kind += '#';
  }
  return kind;
}

}  // namespace topolaunch
