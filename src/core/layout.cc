#include "topolaunch/layout.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <unordered_map>

#include <fmt/format.h>

namespace topolaunch {

bool GpuFabric::InDomain() const { return state == "completed" && cluster_uuid != kZeroFabricUuid; }

namespace {
constexpr std::array<std::pair<PcieRelation, std::string_view>, 5> kRelationNames{{
    {PcieRelation::kSamePcieSwitch, "same_pcie_switch"},
    {PcieRelation::kSameHostBridge, "same_host_bridge"},
    {PcieRelation::kSameSocket, "same_socket"},
    {PcieRelation::kAcrossSockets, "across_sockets"},
    {PcieRelation::kUnknown, "unknown"},
}};
}  // namespace

std::string_view PcieRelationName(PcieRelation relation) {
  for (const auto& [r, name] : kRelationNames)
    if (r == relation) return name;
  return "unknown";
}

std::optional<PcieRelation> ParsePcieRelation(std::string_view name) {
  for (const auto& [r, n] : kRelationNames)
    if (n == name) return r;
  return std::nullopt;
}

std::vector<const PciBridge*> PciBridgeChain(const HostLayout& layout, std::string_view bridge) {
  std::vector<const PciBridge*> chain;
  if (bridge.empty()) return chain;
  std::unordered_map<std::string_view, const PciBridge*> by_id;
  for (const PciBridge& b : layout.pci_bridges) by_id.emplace(b.pci_bus_id, &b);
  // At most one step per listed bridge: a loop cannot go on.
  while (!bridge.empty() && chain.size() < layout.pci_bridges.size()) {
    auto it = by_id.find(bridge);
    if (it == by_id.end()) break;
    chain.push_back(it->second);
    bridge = it->second->parent;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

Result<std::vector<int>> ParseCpuList(std::string_view text, std::string_view where) {
  // Bounded: CPU numbers stay below kMaxCpu, and the ranges are merged
  // before they are expanded, so neither "0-999999999" nor "0-1048575"
  // repeated a thousand times can make us allocate more than kMaxCpu ints.
  constexpr int kMaxCpu = 1 << 20;
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kBadInput, std::string(where),
                 fmt::format("invalid CPU list \"{}\": {} (expected e.g. \"0-15,32-47\")",
                             text.size() > 80 ? std::string(text.substr(0, 80)) + "..." : std::string(text), why));
  };
  std::vector<int> cpus;
  if (text.empty()) return cpus;
  std::vector<std::pair<int, int>> ranges;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    size_t dash = item.find('-');
    int lo = 0, hi = 0;
    auto parse = [](std::string_view s, int& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size() && !s.empty();
    };
    if (dash == std::string_view::npos) {
      if (!parse(item, lo)) return bad(fmt::format("\"{}\" is not a number", item));
      hi = lo;
    } else if (!parse(item.substr(0, dash), lo) || !parse(item.substr(dash + 1), hi)) {
      return bad(fmt::format("\"{}\" is not a range", item));
    }
    if (lo < 0 || hi < lo || hi >= kMaxCpu) return bad(fmt::format("range \"{}\" out of order or too large", item));
    ranges.emplace_back(lo, hi);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(ranges.begin(), ranges.end());
  int next = 0;  // CPUs below this are already in `cpus`
  for (auto [lo, hi] : ranges)
    for (int c = std::max(lo, next); c <= hi; ++c) cpus.push_back(c), next = c + 1;
  return cpus;
}

}  // namespace topolaunch
