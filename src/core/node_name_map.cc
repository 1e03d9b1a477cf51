// infiniband-diags' node-name-map: one "<guid> \"<name>\"" per line.
//
// The format (ibnetdiscover(8), iblinkinfo(8)): a GUID in hex (with or
// without 0x), whitespace, and the name in double quotes; '#' starts a
// comment; blank lines are ignored. A later line for the same GUID wins,
// as in libibnetdisc's own reader, but we report it so typos surface.
#include <fmt/format.h>

#include "core/text_io.h"
#include "topolaunch/topology.h"

namespace topolaunch {

Result<NodeNameMap> ParseNodeNameMap(std::string_view text, std::string_view file_name) {
  NodeNameMap map;
  std::vector<Problem> problems;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    std::string where = fmt::format("{}:{}", file_name, line_no);
    line = TrimLine(line);
    if (line.empty() || line.front() == '#') continue;
    size_t space = line.find_first_of(" \t");
    std::optional<Guid> guid = ParseGuid(line.substr(0, space));
    if (!guid) {
      problems.push_back({where, fmt::format("\"{}\" is not a GUID (expected 0x followed by up to 16 hex digits)",
                                             line.substr(0, space))});
      continue;
    }
    std::string_view rest = space == std::string_view::npos ? std::string_view{} : TrimLine(line.substr(space));
    if (rest.size() < 2 || rest.front() != '"') {
      problems.push_back({where, "expected a quoted name after the GUID, as in: 0x0002c90300a1b2c3 \"node017\""});
      continue;
    }
    size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) {
      problems.push_back({where, "the name's closing quote is missing"});
      continue;
    }
    std::string_view tail = TrimLine(rest.substr(close + 1));
    if (!tail.empty() && tail.front() != '#') {
      problems.push_back({where, fmt::format("unexpected text after the name: \"{}\"", tail)});
      continue;
    }
    std::string name(rest.substr(1, close - 1));
    if (TrimLine(name).empty()) {
      problems.push_back({where, "the name is empty"});
      continue;
    }
    map[*guid] = std::move(name);
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return map;
}

}  // namespace topolaunch
