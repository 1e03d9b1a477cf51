#include "launch/srun_port_range.h"

#include <fmt/format.h>

#include "core/text_io.h"

namespace topolaunch {

namespace {

std::optional<int> Port(std::string_view text) {
  std::optional<long long> port = DecimalNumber(text, 0, 65535);
  return port ? std::optional<int>(static_cast<int>(*port)) : std::nullopt;
}

}  // namespace

Result<std::optional<PortRange>> ParseSrunPortRange(std::string_view config) {
  while (!config.empty()) {
    size_t end = config.find('\n');
    std::string_view line = config.substr(0, end);
    config.remove_prefix(end == std::string_view::npos ? config.size() : end + 1);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos || TrimLine(line.substr(0, equals)) != "SrunPortRange") continue;
    std::string_view value = TrimLine(line.substr(equals + 1));
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
