#include "env/route_table.h"

#include <bit>
#include <sstream>

#include <fmt/format.h>

namespace topolaunch {

Result<std::vector<RouteEntry>> ParseProcNetRoute(std::string_view text, std::string_view file_name) {
  std::vector<RouteEntry> routes;
  std::vector<Problem> problems;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    if (++number == 1 || line.find_first_not_of(" \t\r") == std::string::npos) continue;  // header
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask)) {
      problems.push_back({fmt::format("{}:{}", file_name, number), "expected Iface Destination Gateway Flags RefCnt Use Metric Mask"});
      continue;
    }
    try {
      routes.push_back({iface, static_cast<std::uint32_t>(std::stoul(destination, nullptr, 16)),
                        static_cast<std::uint32_t>(std::stoul(mask, nullptr, 16)), std::stoi(metric),
                        (std::stoul(flags, nullptr, 16) & 0x1) != 0});
    } catch (const std::exception&) {
      problems.push_back({fmt::format("{}:{}", file_name, number), "expected hexadecimal addresses and flags"});
    }
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return routes;
}

std::optional<std::string> ChooseRoute(const std::vector<RouteEntry>& routes, std::uint32_t address) {
  const RouteEntry* best = nullptr;
  for (const RouteEntry& route : routes) {
    if (!route.up || (address & route.mask) != (route.destination & route.mask)) continue;
    int bits = std::popcount(route.mask), best_bits = best ? std::popcount(best->mask) : -1;
    if (!best || bits > best_bits || (bits == best_bits && route.metric < best->metric)) best = &route;
  }
  if (!best) return std::nullopt;
  return best->interface;
}

}  // namespace topolaunch
