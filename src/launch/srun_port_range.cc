#include "launch/srun_port_range.h"

#include <charconv>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::optional<int> Port(std::string_view text) {
  int value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > 65535) return std::nullopt;
  return value;
}

}  // namespace

Result<std::optional<PortRange>> ParseSrunPortRange(std::string_view config) {
  while (!config.empty()) {
    size_t end = config.find('\n');
    std::string_view line = config.substr(0, end);
    config.remove_prefix(end == std::string_view::npos ? config.size() : end + 1);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos || Trim(line.substr(0, equals)) != "SrunPortRange") continue;
    std::string_view value = Trim(line.substr(equals + 1));
    size_t dash = value.find('-');
    std::optional<int> first = Port(value.substr(0, dash));
    std::optional<int> last = dash == std::string_view::npos ? std::nullopt : Port(value.substr(dash + 1));
    if (first && last && *first == 0 && *last == 0) return std::optional<PortRange>();
    if (!first || !last || *first < 1 || *first > *last)
      return Error(ErrorCode::kBadInput, "scontrol show config",
                   fmt::format("SrunPortRange is \"{}\", not FIRST-LAST between 1 and 65535", value));
    return std::optional<PortRange>(PortRange{*first, *last});
  }
  return std::optional<PortRange>();
}

std::string FormatPortRange(const PortRange& range) { return fmt::format("{}-{}", range.first, range.last); }

}  // namespace topolaunch
