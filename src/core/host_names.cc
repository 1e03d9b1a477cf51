// Host names: which CA descriptions name a host, how names compare.
//
// InfiniBand CAs describe themselves with a NodeDescription that Linux sets
// to "%h %d" (host name, device: "node017 mlx5_0"). Until the driver or an
// admin sets it, the firmware's default is a vendor string ("MT4129 ConnectX7
// Mellanox Technologies"), whose first word would make a bogus host "MT4129".
// Those, SHARP aggregation nodes and switch management ports are not hosts;
// the reason is kept so `discover` can explain why a CA is in `unmapped`.
// Neither is a host name an OS installs by default ("localhost", "ubuntu",
// "(none)"): rdma-ndd wrote the node description before the host got its
// real name, and every such host would merge into one "localhost".
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "topolaunch/topology.h"

namespace topolaunch {

namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view FirstWord(std::string_view text) {
  size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  size_t end = text.find_first_of(" \t", start);
  return text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Mellanox/NVIDIA firmware defaults start with the chip's part number
// ("MT4129", "MT25408", "MT23108") and name the vendor.
bool IsFirmwareDefault(std::string_view description) {
  std::string_view word = FirstWord(description);
  bool part_number = word.size() > 2 && word.substr(0, 2) == "MT" && IsDigit(word[2]);
  return part_number || Contains(description, "Mellanox Technologies") ||
         Contains(description, "NVIDIA Technologies");
}

bool IsOsDefaultHostName(std::string_view word) {
  static constexpr std::string_view kDefaults[] = {"localhost", "localhost.localdomain", "localhost6", "ubuntu",
                                                   "debian", "centos", "rocky", "almalinux", "fedora", "rhel",
                                                   "linux", "(none)", "none", "unknown", "ubuntu-server"};
  std::string lower;
  for (char c : word) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view d : kDefaults)
    if (lower == d) return true;
  return false;
}

}  // namespace

std::optional<std::string> WhyNotAHostDescription(std::string_view description) {
  if (FirstWord(description).empty()) return "empty node description";
  if (Contains(description, "Aggregation Node"))
    return "SHARP aggregation node (in-network reduction engine, not a host)";
  // Managed switches expose a CA for their management port, described like
  // the switch itself ("MF0;sw-name:MQM8700/U1").
  if (Contains(description, "MF0;") || Contains(description, "switch management"))
    return "switch management port, not a host";
  if (IsFirmwareDefault(description))
    return "firmware default node description: the host never set it (set it with "
           "/sys/class/infiniband/<dev>/node_desc or name the GUID in --node-name-map)";
  std::string_view word = FirstWord(description);
  if (IsOsDefaultHostName(word))
    return fmt::format("{}: \"{}\" is an OS default host name, not this host's (set the host name, then restart "
                       "rdma-ndd or write /sys/class/infiniband/<dev>/node_desc)",
                       kOsDefaultHostName, word);
  if (!IsValidHostName(word))
    return fmt::format("first word \"{}\" of the node description is not a host name", word);
  return std::nullopt;
}

bool IsValidHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  if (name.front() == '-' || name.front() == '.') return false;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      size_t za = na.find_first_not_of('0'), zb = nb.find_first_not_of('0');
      std::string_view va = za == std::string_view::npos ? std::string_view{} : na.substr(za);
      std::string_view vb = zb == std::string_view::npos ? std::string_view{} : nb.substr(zb);
      if (va.size() != vb.size()) return va.size() < vb.size();
      if (va != vb) return va < vb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // "node01" vs "node1": equal numerically, order bytewise
}

}  // namespace topolaunch
