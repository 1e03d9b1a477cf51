// Expanding Slurm host-list expressions the way Slurm 22.05 does.
//
// `scontrol show hostnames` (src/common/hostlist.c) reads an expression as
// tokens separated by ',', ' ' or '\t' -- separators inside "[...]" do not
// split. A token without brackets is one host. A token with brackets is text
// and bracket groups, "a[1-2]b[3,5]": each group is a comma list of N or N-M
// (M may be left out: "1-" is 1), each number zero-padded to the width its
// lower bound was written with ("[08-10]" -> 08 09 10, "[8-010]" -> 8 9 10).
// Nothing may follow the last group: 22.05 rejects "rack[1-2]-ib". Order and
// duplicates are kept. With several groups the last one varies fastest, then
// the first, second, ... up to the one before the last, which varies slowest
// ("a[1-2]b[3-4]c[5-6]" starts a1b3c5 a1b3c6 a2b3c5): that is the order of
// Slurm's recursion, so we follow it. One range may hold at most 65536 hosts
// and so may each group before the last, as in Slurm.
//
// Where we deliberately differ: scontrol turns many malformed expressions into
// host names nobody meant. We reject instead, naming the bad part:
//  - characters that cannot be in a host name (only letters, digits, '-', '.',
//    '_'): scontrol passes "n@1" through and makes "node]" out of "node[";
//  - unbalanced or nested brackets: scontrol makes "abc" out of "[abc";
//  - junk in a range: scontrol reads "[ 1-2]", "[1a-2]" and "[+1-2]" as 01 02;
//  - numbers of 2^64-1 and more: scontrol saturates them (or crashes);
//  - a bad group before the second-to-last one ("a[x]b[1]c[1]"), which
//    scontrol silently expands to nothing;
//  - more than kMaxExpandedHosts hosts in all; the count is known before any
//    name is made, so a hostile expression cannot exhaust memory.
#include "core/hostlist.h"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

constexpr uint64_t kSlurmMaxRange = 64 * 1024;  // Slurm's MAX_RANGE and MAX_PREFIX_CNT

// Why a part of the expression is bad; nullopt when it is fine.
using Failure = std::optional<std::string>;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\t'; }
bool IsNameChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '.' || c == '_';
}

// Quotes user text for a message: control and non-ASCII bytes as \xNN, cut
// short so a megabyte of input does not make a megabyte of error.
std::string Quote(std::string_view text) {
  constexpr size_t kMax = 80;
  std::string quoted = "\"";
  for (char c : text.substr(0, kMax)) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) quoted += fmt::format("\\x{:02x}", byte);
    else quoted += c;
  }
  if (text.size() > kMax) return fmt::format("{}...\" ({} characters)", quoted, text.size());
  return quoted + "\"";
}

std::string DescribeChar(char c) {
  if (c == ' ') return "a space";
  if (c == '\t') return "a tab";
  unsigned char byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte == 0x7f) return fmt::format("control character 0x{:02x}", byte);
  if (byte >= 0x80) return fmt::format("non-ASCII byte 0x{:02x}", byte);
  return fmt::format("'{}'", c);
}

struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  int width = 0;  // digits of the lower bound as written
};

struct Group {
  std::vector<Range> ranges;
  uint64_t count = 0;
};

// A token: texts[i] comes before groups[i]; a last text follows the groups
// (always empty when there are groups, since Slurm allows nothing there).
struct Pattern {
  std::vector<std::string_view> texts;
  std::vector<Group> groups;
};

// Splits at separators outside brackets; checks that brackets pair up.
Failure SplitTokens(std::string_view expression, std::vector<std::string_view>& tokens) {
  size_t start = std::string_view::npos, open = std::string_view::npos;
  for (size_t i = 0; i <= expression.size(); ++i) {
    char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') {
      if (open != std::string_view::npos)
        return fmt::format("'[' at offset {} inside the brackets opened at offset {}: brackets cannot nest", i, open);
      open = i;
    } else if (c == ']') {
      if (open == std::string_view::npos) return fmt::format("']' at offset {} closes no '['", i);
      open = std::string_view::npos;
    } else if (IsSeparator(c) && open == std::string_view::npos) {
      if (start != std::string_view::npos) tokens.push_back(expression.substr(start, i - start));
      start = std::string_view::npos;
      continue;
    }
    if (start == std::string_view::npos) start = i;
  }
  if (open != std::string_view::npos) return fmt::format("'[' at offset {} is never closed by ']'", open);
  return std::nullopt;
}

Failure ParseNumber(std::string_view digits, uint64_t& value) {
  value = 0;
  for (char c : digits) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - 1 - d) / 10)
      return fmt::format("number {} is too large", digits);
    value = value * 10 + d;
  }
  return std::nullopt;
}

// "N", "N-M" or "N-" (which Slurm reads as N).
Failure ParseRange(std::string_view text, Range& range) {
  size_t dash = text.find('-');
  std::string_view lo = text.substr(0, dash);
  std::string_view hi = dash == std::string_view::npos ? lo : text.substr(dash + 1);
  if (hi.empty()) hi = lo;
  auto all_digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (!all_digits(lo) || !all_digits(hi))
    return fmt::format("\"{}\" is not a number or a range N-M of decimal numbers", text);
  if (Failure f = ParseNumber(lo, range.lo)) return f;
  if (Failure f = ParseNumber(hi, range.hi)) return f;
  if (range.lo > range.hi) return fmt::format("range \"{}\" runs backwards", text);
  if (range.hi - range.lo >= kSlurmMaxRange)
    return fmt::format("range \"{}\" holds more than {} hosts, Slurm's limit for one range", text, kSlurmMaxRange);
  range.width = static_cast<int>(lo.size());
  return std::nullopt;
}

Failure ParseGroup(std::string_view content, bool last, Group& group) {
  size_t pos = 0;
  while (true) {
    size_t comma = content.find(',', pos);
    std::string_view item = content.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
    if (item.empty()) return fmt::format("empty range in \"[{}]\"", content);
    Range range;
    if (Failure f = ParseRange(item, range)) return f;
    group.ranges.push_back(range);
    group.count += range.hi - range.lo + 1;  // at most 2^16 per range, 2^64/2^16 ranges
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (!last && group.count > kSlurmMaxRange)
    return fmt::format("\"[{}]\" holds more than {} hosts, Slurm's limit for a group before the last",
                       content, kSlurmMaxRange);
  return std::nullopt;
}

Failure ParseToken(std::string_view token, Pattern& pattern) {
  size_t text_start = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    char c = token[i];
    if (c == '[') {
      size_t close = token.find(']', i);  // exists: SplitTokens paired them
      pattern.texts.push_back(token.substr(text_start, i - text_start));
      bool last = token.find('[', close) == std::string_view::npos;
      if (last && close + 1 != token.size())
        return fmt::format("\"{}\" follows the last ']': Slurm 22.05 allows text only before a bracket group",
                           token.substr(close + 1));
      Group group;
      if (Failure f = ParseGroup(token.substr(i + 1, close - i - 1), last, group)) return f;
      pattern.groups.push_back(std::move(group));
      i = close;
      text_start = close + 1;
    } else if (!IsNameChar(c)) {
      return fmt::format("{} cannot be in a host name (letters, digits, '-', '.' and '_' can)", DescribeChar(c));
    }
  }
  pattern.texts.push_back(token.substr(text_start));
  return std::nullopt;
}

// Number of hosts `pattern` names, or nullopt when more than `limit`.
std::optional<uint64_t> CountHosts(const Pattern& pattern, uint64_t limit) {
  uint64_t count = 1;
  for (const Group& group : pattern.groups) {
    if (group.count == 0 || count > limit / group.count) return std::nullopt;
    count *= group.count;
  }
  return count <= limit ? std::optional(count) : std::nullopt;
}

std::vector<std::string> GroupValues(const Group& group) {
  std::vector<std::string> values;
  values.reserve(group.count);
  for (const Range& r : group.ranges)
    for (uint64_t v = r.lo;; ++v) {
      values.push_back(fmt::format("{:0{}}", v, r.width));
      if (v == r.hi) break;
    }
  return values;
}

// Appends the names in Slurm's order: the last group fastest, then the first,
// the second, ... (see the top of the file).
void AppendNames(const Pattern& pattern, std::vector<std::string>& names) {
  size_t k = pattern.groups.size();
  if (k == 0) {
    names.emplace_back(pattern.texts[0]);
    return;
  }
  std::vector<std::vector<std::string>> values;
  for (const Group& group : pattern.groups) values.push_back(GroupValues(group));
  std::vector<size_t> order{k - 1};  // odometer digits, fastest first
  for (size_t g = 0; g + 1 < k; ++g) order.push_back(g);
  std::vector<size_t> at(k, 0);
  while (true) {
    std::string name;
    for (size_t g = 0; g < k; ++g) name.append(pattern.texts[g]).append(values[g][at[g]]);
    names.push_back(std::move(name));
    size_t d = 0;
    for (; d < k; ++d) {
      size_t g = order[d];
      if (++at[g] < values[g].size()) break;
      at[g] = 0;
    }
    if (d == k) return;
  }
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view expression) {
  std::string where = "host list " + Quote(expression);
  std::vector<std::string_view> tokens;
  if (Failure f = SplitTokens(expression, tokens)) return Error(ErrorCode::kBadInput, where, *f);
  std::vector<Pattern> patterns(tokens.size());
  uint64_t total = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (Failure f = ParseToken(tokens[i], patterns[i])) {
      if (tokens[i].size() == expression.size()) return Error(ErrorCode::kBadInput, where, *f);
      return Error(ErrorCode::kBadInput, where, fmt::format("in {}: {}", Quote(tokens[i]), *f));
    }
    std::optional<uint64_t> count = CountHosts(patterns[i], kMaxExpandedHosts - total);
    if (!count)
      return Error(ErrorCode::kBadInput, where,
                   fmt::format("expands to more than {} hosts (at {})", kMaxExpandedHosts, Quote(tokens[i])));
    total += *count;
  }
  std::vector<std::string> names;
  names.reserve(total);
  for (const Pattern& pattern : patterns) AppendNames(pattern, names);
  return names;
}

std::string HostListForMessages(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return CompressHostList(hosts);
}

}  // namespace topolaunch
