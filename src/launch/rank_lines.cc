#include "launch/rank_lines.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace topolaunch {

namespace {

constexpr char kMark = '\x1e';
constexpr std::string_view kHello = "topolaunch-rank ";

// A number 0..kMaxRank followed by one space, taken off the front of `text`.
std::optional<int> TakeNumber(std::string_view& text) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  size_t used = static_cast<size_t>(end - text.data());
  if (ec != std::errc() || used == 0 || used > 8 || text[0] == '+' || value < 0 || value > kMaxRank) return std::nullopt;
  if (used >= text.size() || text[used] != ' ') return std::nullopt;
  text.remove_prefix(used + 1);
  return value;
}

}  // namespace

std::string FormatRankHello(RankLabel label, OutputStream stream) {
  return fmt::format("{}{} {} {}\n", kHello, label.rank, label.local_rank, stream == OutputStream::kStdout ? "out" : "err");
}

std::optional<RankHello> ParseRankHello(std::string_view line) {
  if (!line.starts_with(kHello)) return std::nullopt;
  line.remove_prefix(kHello.size());
  std::optional<int> rank = TakeNumber(line);
  std::optional<int> local = rank ? TakeNumber(line) : std::nullopt;
  if (!local || *local > *rank) return std::nullopt;
  if (line != "out" && line != "err") return std::nullopt;
  return RankHello{{*rank, *local}, line == "out" ? OutputStream::kStdout : OutputStream::kStderr};
}

std::string FormatRankLine(RankLabel label, std::string_view text) {
  std::string line = fmt::format("{}{} {} ", kMark, label.rank, label.local_rank);
  line.append(text);
  return line;
}

RankLine ParseRankLine(std::string_view line) {
  if (line.empty() || line[0] != kMark) return {{}, line};
  std::string_view rest = line.substr(1);
  std::optional<int> rank = TakeNumber(rest);
  std::optional<int> local = rank ? TakeNumber(rest) : std::nullopt;
  if (!local || *local > *rank) return {{}, line};
  return {{*rank, *local}, rest};
}

Result<RankSet> RankSet::Parse(std::string_view text, std::string_view where) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kBadUsage, std::string(where),
                 fmt::format("\"{}\": {} (expected ranks like \"0\", \"0,3\" or \"0-7,16\")",
                             text.substr(0, 80), why));
  };
  auto number = [](std::string_view item, int& value) {
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    return !item.empty() && ec == std::errc() && end == item.data() + item.size() && value >= 0 && value <= kMaxRank;
  };
  RankSet set;
  if (text.empty()) return bad("no rank");
  size_t pos = 0;
  for (;;) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    size_t dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos ? !number(item, lo) : !number(item.substr(0, dash), lo) || !number(item.substr(dash + 1), hi))
      return bad(fmt::format("\"{}\" is not a rank (0..{}) or a range of them", item, kMaxRank));
    if (dash == std::string_view::npos) hi = lo;
    if (hi < lo) return bad(fmt::format("range \"{}\" is out of order", item));
    set.ranges_.emplace_back(lo, hi);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(set.ranges_.begin(), set.ranges_.end());
  std::vector<std::pair<int, int>> merged;
  for (auto range : set.ranges_) {
    if (!merged.empty() && range.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, range.second);
    else merged.push_back(range);
  }
  set.ranges_ = std::move(merged);
  return set;
}

bool RankSet::Contains(int rank) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(rank, kMaxRank + 1));
  return it != ranges_.begin() && std::prev(it)->second >= rank;
}

}  // namespace topolaunch
