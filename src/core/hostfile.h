// Host files in the DeepSpeed / Open MPI shape:
//
//   # comment
//   node017 slots=8
//   node018            # slots optional
//
// One host per line; `slots=N` (Open MPI also writes `max_slots=N`, read and
// ignored); `#` starts a comment anywhere; blank lines are skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

struct HostfileEntry {
  std::string host;
  std::optional<int> slots;   ///< `slots=N` when given
  int line = 0;               ///< 1-based line number in the file
  bool operator==(const HostfileEntry&) const = default;
};

/// Parses a host file's text. Every problem is reported at once as
/// `file_name:line` (kBadInput): a name that is not a host name, a token
/// other than slots=/max_slots=, a slot count that is not 1..65536, a host
/// listed twice (naming the first line). Entries come in file order.
Result<std::vector<HostfileEntry>> ParseHostfile(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
