// Compressing host names into a Slurm host list the way Slurm 22.05 does.
//
// `scontrol show hostlist` neither sorts nor removes duplicates: it appends
// the names one by one to a list of ranges and writes the list out.
//
// 1. A name splits into a prefix and its trailing digits ("rack1-n007" ->
//    "rack1-n", 7, width 3). A name without trailing digits is a range of its
//    own that never merges.
// 2. A name extends the LAST range only, when the prefixes are equal, its
//    number is one more than the range's end and the zero padding agrees:
//    n9,n10 -> n[9-10]; n09,n10 -> n[09-10]; but n0099,n100 stay apart
//    (0099 is padded to four digits, 100 is not). When one of the two widths
//    changes neither number's padding, the range takes the other's width;
//    that is Slurm's _width_equiv, which we follow step for step.
// 3. Consecutive ranges with the same prefix share one bracket: n3,n1,n2 ->
//    n[3,1-2]; a prefix with a single number and no neighbour is written bare.
//
// One deliberate difference: Slurm reads trailing digits worth 2^64-1 or more
// as 18446744073709551615 and so rewrites the name; we keep such a name whole
// (as a range without a number).
#include <limits>

#include <fmt/format.h>

#include "core/hostlist.h"

namespace topolaunch {

namespace {

struct HostRange {
  std::string prefix;  // the whole name when `single`
  uint64_t lo = 0;
  uint64_t hi = 0;
  int width = 0;
  bool single = false;
};

HostRange SplitName(const std::string& name) {
  size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  HostRange range{name, 0, 0, 0, true};
  if (digits == name.size()) return range;
  uint64_t value = 0;
  for (size_t i = digits; i < name.size(); ++i) {
    uint64_t d = static_cast<uint64_t>(name[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - 1 - d) / 10) return range;
    value = value * 10 + d;
  }
  return {name.substr(0, digits), value, value, static_cast<int>(name.size() - digits), false};
}

// Zeros that printing `num` at `width` adds.
int ZeroPadding(uint64_t num, int width) {
  int digits = 1;
  while (num /= 10) ++digits;
  return width > digits ? width - digits : 0;
}

// Whether numbers `n` (printed at width `wn`) and `m` (at `wm`) can share one
// width without changing either's padding; if so, aligns the widths.
bool AlignWidths(uint64_t n, int& wn, uint64_t m, int& wm) {
  if (wn == wm) return true;
  bool n_changes = ZeroPadding(n, wn) != ZeroPadding(n, wm);
  bool m_changes = ZeroPadding(m, wm) != ZeroPadding(m, wn);
  if (n_changes && m_changes) return false;
  if (n_changes) wm = wn;
  else wn = wm;
  return true;
}

void Append(std::vector<HostRange>& ranges, HostRange next) {
  if (!ranges.empty() && !next.single) {
    HostRange& tail = ranges.back();
    if (!tail.single && tail.hi + 1 == next.lo && tail.prefix == next.prefix &&
        AlignWidths(tail.lo, tail.width, next.lo, next.width)) {
      tail.hi = next.hi;
      return;
    }
  }
  ranges.push_back(std::move(next));
}

bool SameBracket(const HostRange& a, const HostRange& b) {
  return !a.single && !b.single && a.prefix == b.prefix;
}

void AppendNumbers(const HostRange& r, std::string& out) {
  out += fmt::format("{:0{}}", r.lo, r.width);
  if (r.hi > r.lo) out += fmt::format("-{:0{}}", r.hi, r.width);
}

}  // namespace

std::string CompressHostList(const std::vector<std::string>& hosts) {
  std::vector<HostRange> ranges;
  for (const std::string& host : hosts) Append(ranges, SplitName(host));
  std::string out;
  for (size_t i = 0; i < ranges.size();) {
    if (i > 0) out += ',';
    const HostRange& first = ranges[i];
    out += first.prefix;
    if (first.single) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < ranges.size() && SameBracket(ranges[end - 1], ranges[end])) ++end;
    bool bracket = end - i > 1 || first.hi > first.lo;
    if (bracket) out += '[';
    for (size_t j = i; j < end; ++j) {
      if (j > i) out += ',';
      AppendNumbers(ranges[j], out);
    }
    if (bracket) out += ']';
    i = end;
  }
  return out;
}

}  // namespace topolaunch
