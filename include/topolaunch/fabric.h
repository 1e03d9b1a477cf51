// The raw InfiniBand fabric, as every fabric source reports it.
//
// Three sources produce this model: the live libibnetdisc walk, a libibnetdisc
// cache file, and an ibnetdiscover text dump. They all feed BuildTopology(), so
// the same fabric gives the same topology.json whichever way it was read.
// Nothing here interprets descriptions; that is BuildTopology's job.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

/// A 64-bit InfiniBand GUID.
using Guid = std::uint64_t;

/// Lowercase "0x" + 16 hex digits, the form topology.json uses.
std::string FormatGuid(Guid guid);

/// FormatGuid's text in a fixed buffer, for writers of thousands of GUIDs
/// (topology.json) that should not make a heap string of each.
struct GuidText {
  explicit GuidText(Guid guid);
  operator std::string_view() const { return {chars.data(), chars.size()}; }
  std::array<char, 18> chars;  ///< "0x" and 16 hex digits
};

/// Accepts "0x..." or bare hex (1-16 digits); nullopt otherwise.
std::optional<Guid> ParseGuid(std::string_view text);

enum class NodeType { kCa, kSwitch, kRouter };

/// "Ca", "Switch", "Router".
std::string_view NodeTypeName(NodeType type);

/// One end of a cable: a node and one of its port numbers.
struct PortRef {
  Guid node_guid = 0;
  int port = 0;
  bool operator==(const PortRef&) const = default;
  auto operator<=>(const PortRef&) const = default;
};

/// A port that exists on a node. Width and speed use the names infiniband-diags
/// print ("4X", "HDR"); empty when unknown. State is "Active", "Init", "Armed",
/// "Down" or empty when the source does not carry it (text dumps).
struct FabricPort {
  int number = 0;
  Guid port_guid = 0;  ///< 0 when unknown (switch ports share the node's)
  int lid = 0;         ///< 0 when unknown
  std::string width;
  std::string speed;
  std::string state;
  std::optional<PortRef> remote;  ///< the peer port when the link is up
  /// The widest width and fastest speed the port supports (PortInfo
  /// LinkWidthSupported / LinkSpeed(Ext)Supported), in the same names; empty
  /// when the source does not carry them (text dumps, caches of old ports).
  std::string supported_width;
  std::string supported_speed;
};

/// A switch, channel adapter or router.
struct FabricNode {
  NodeType type = NodeType::kCa;
  Guid guid = 0;
  Guid system_guid = 0;
  std::string description;  ///< NodeDescription, as the node reports it
  int num_ports = 0;        ///< ports the node has (switches: external ports)
  std::vector<FabricPort> ports;  ///< ports the source listed, by number

  const FabricPort* FindPort(int number) const;
};

/// A whole fabric as discovered or loaded. `source` is "live",
/// "ibnetdiscover" or "cache" (the values of generated.fabric_source).
struct Fabric {
  std::string source;
  std::vector<FabricNode> nodes;
  /// What the source tolerated and skipped (junk before a dump's first
  /// record), for people; not part of topology.json.
  std::vector<std::string> notes;

  const FabricNode* FindNode(Guid guid) const;
};

/// Nominal data rate of one link in Gb/s ("4X","HDR" -> 200, "4X","FDR" -> 56),
/// as ibstat prints it; nullopt for unknown names.
std::optional<double> LinkRateGbps(std::string_view width, std::string_view speed);

/// Splits an infiniband-diags "4xHDR" token into {"4X","HDR"}; nullopt if it
/// is not of that shape.
std::optional<std::pair<std::string, std::string>> SplitWidthSpeed(std::string_view token);

}  // namespace topolaunch
