// The kernel's IPv4 routing table as /proc/net/route prints it, and the
// longest-prefix choice of the route toward an address. Pure: the file's
// text comes in as a string (kernel_route_lookup.cc reads it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

/// One route. Addresses are raw in_addr.s_addr values (network byte order
/// in memory), which is how /proc/net/route prints them.
struct RouteEntry {
  std::string interface;
  std::uint32_t destination = 0;
  std::uint32_t mask = 0;
  int metric = 0;
  bool up = false;
  bool operator==(const RouteEntry&) const = default;
};

/// Parses /proc/net/route (header line, then "Iface Destination Gateway
/// Flags RefCnt Use Metric Mask ..."). Errors: kBadInput naming the line.
Result<std::vector<RouteEntry>> ParseProcNetRoute(std::string_view text, std::string_view file_name);

/// The interface of the up route with the longest mask matching `address`
/// (lowest metric among equals); nullopt when none matches.
std::optional<std::string> ChooseRoute(const std::vector<RouteEntry>& routes, std::uint32_t address);

}  // namespace topolaunch
