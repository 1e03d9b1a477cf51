#include "core/hostfile.h"

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (true) {
    size_t b = line.find_first_not_of(" \t\r", pos);
    if (b == std::string_view::npos) break;
    size_t e = line.find_first_of(" \t\r", b);
    words.push_back(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    pos = e;
  }
  return words;
}

std::optional<int> SlotCount(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65536) return std::nullopt;
  return value;
}

// Reads one non-empty line's words into `entry`; problems go to `problems`.
void ParseWords(const std::vector<std::string_view>& words, const std::string& where, HostfileEntry& entry,
                std::vector<Problem>& problems) {
  entry.host = std::string(words[0]);
  if (!IsValidHostName(entry.host))
    problems.push_back({where, fmt::format("\"{}\" is not a host name (letters, digits, '-', '.', '_')", entry.host)});
  for (size_t i = 1; i < words.size(); ++i) {
    std::string_view word = words[i];
    size_t eq = word.find('=');
    std::string_view key = word.substr(0, eq), value = eq == std::string_view::npos ? "" : word.substr(eq + 1);
    if (key != "slots" && key != "max_slots" && key != "max-slots") {
      problems.push_back({where, fmt::format("unexpected \"{}\": expected \"slots=N\" after the host name", word)});
      continue;
    }
    std::optional<int> count = SlotCount(value);
    if (!count) {
      problems.push_back({where, fmt::format("\"{}\": expected a whole number 1..65536 after \"{}=\"", word, key)});
      continue;
    }
    if (key == "slots") entry.slots = count;
  }
}

}  // namespace

Result<std::vector<HostfileEntry>> ParseHostfile(std::string_view text, std::string_view file_name) {
  std::vector<HostfileEntry> entries;
  std::vector<Problem> problems;
  std::map<std::string, int> first_line;
  int number = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    std::string where = fmt::format("{}:{}", file_name, number);
    HostfileEntry entry;
    entry.line = number;
    ParseWords(words, where, entry, problems);
    auto [it, fresh] = first_line.emplace(entry.host, number);
    if (!fresh) {
      problems.push_back({where, fmt::format("host \"{}\" is listed twice (first on line {})", entry.host, it->second)});
      continue;
    }
    entries.push_back(std::move(entry));
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return entries;
}

}  // namespace topolaunch
