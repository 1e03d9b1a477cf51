#include "topolaunch/fabric.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace topolaunch {

GuidText::GuidText(Guid guid) { fmt::format_to(chars.data(), "0x{:016x}", guid); }

std::string FormatGuid(Guid guid) { return std::string(GuidText(guid)); }

std::optional<Guid> ParseGuid(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  Guid value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return std::nullopt;
    value = (value << 4) | static_cast<Guid>(digit);
  }
  return value;
}

std::string_view NodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kCa: return "Ca";
    case NodeType::kSwitch: return "Switch";
    case NodeType::kRouter: return "Router";
  }
  return "?";
}

const FabricPort* FabricNode::FindPort(int number) const {
  for (const FabricPort& p : ports)
    if (p.number == number) return &p;
  return nullptr;
}

// A live walk and a cache come in GUID order (ConvertFabric), so a binary
// search finds their nodes; a scan stays the answer for any other order (a
// text dump's), and for a GUID that is not there. Audit looks up a node per
// cable and per host port: scanning alone made it quadratic in the fabric.
const FabricNode* Fabric::FindNode(Guid guid) const {
  // By hand, not std::lower_bound: that one requires an ordered range.
  for (size_t low = 0, high = nodes.size(); low < high;) {
    size_t mid = low + (high - low) / 2;
    if (nodes[mid].guid == guid) return &nodes[mid];
    if (nodes[mid].guid < guid) low = mid + 1;
    else high = mid;
  }
  for (const FabricNode& n : nodes)
    if (n.guid == guid) return &n;
  return nullptr;
}

namespace {
struct LaneRate {
  std::string_view speed;
  double gbps_per_lane;
};
// Nominal per-lane rates as ibstat/iblinkinfo report them (FDR: 14, so 4X = 56).
constexpr std::array<LaneRate, 9> kLaneRates{{{"SDR", 2.5}, {"DDR", 5}, {"QDR", 10},
                                              {"FDR10", 10}, {"FDR", 14}, {"EDR", 25},
                                              {"HDR", 50}, {"NDR", 100}, {"XDR", 200}}};
}  // namespace

std::optional<double> LinkRateGbps(std::string_view width, std::string_view speed) {
  int lanes = 0;
  if (width == "1X") lanes = 1;
  else if (width == "2X") lanes = 2;
  else if (width == "4X") lanes = 4;
  else if (width == "8X") lanes = 8;
  else if (width == "12X") lanes = 12;
  else return std::nullopt;
  for (const LaneRate& r : kLaneRates)
    if (r.speed == speed) return r.gbps_per_lane * lanes;
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> SplitWidthSpeed(std::string_view token) {
  size_t x = token.find_first_of("xX");
  if (x == 0 || x == std::string_view::npos || x + 1 >= token.size()) return std::nullopt;
  std::string width(token.substr(0, x));
  if (!std::all_of(width.begin(), width.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  width += 'X';
  std::string speed(token.substr(x + 1));
  for (char& c : speed) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!LinkRateGbps(width, speed)) return std::nullopt;
  return std::pair{width, speed};
}

}  // namespace topolaunch
