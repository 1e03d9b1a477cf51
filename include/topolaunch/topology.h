// The topology model written to topology.json (schema topolaunch.topology/1).
//
// BuildTopology() turns a raw Fabric into switches with levels, hosts with
// their HCA attachments, links and the CAs that could not be named. Host
// layouts are attached afterwards by AttachLayout(). Everything downstream
// (plan, env, audit, run) reads this model, never the raw fabric.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/fabric.h"
#include "topolaunch/layout.h"
#include "topolaunch/result.h"

namespace topolaunch {

inline constexpr std::string_view kTopologySchema = "topolaunch.topology/1";

struct TopologySwitch {
  Guid guid = 0;
  std::string name;     ///< node description, or the node-name-map name
  int level = 0;        ///< 1 = leaf (has host CAs); 0 = no path to any leaf
  int ports = 0;
  bool operator==(const TopologySwitch&) const = default;
};

/// One connected (or isolated) port of a host's HCA.
struct HcaAttachment {
  Guid guid = 0;                  ///< the CA's node GUID
  Guid port_guid = 0;
  std::string description;        ///< "node017 mlx5_0"
  std::string device;             ///< "mlx5_0" when the description names it, else ""
  int port = 0;
  std::optional<Guid> switch_guid;   ///< absent for an unlinked port
  std::optional<int> switch_port;
  std::string width;
  std::string speed;
  std::optional<double> rate_gbps;
  bool operator==(const HcaAttachment&) const = default;
};

struct TopologyHost {
  std::string name;
  std::vector<HcaAttachment> hcas;    ///< by (CA guid, port)
  std::optional<HostLayout> layout;
  bool operator==(const TopologyHost&) const = default;
};

struct TopologyLink {
  PortRef from;   ///< the smaller (guid, port) end, so each cable appears once
  PortRef to;
  std::string width;
  std::string speed;
  std::string state;  ///< empty when the source did not say (text dumps)
  bool operator==(const TopologyLink&) const = default;
};

struct UnmappedCa {
  Guid guid = 0;
  std::string description;
  std::string reason;
  bool operator==(const UnmappedCa&) const = default;
};

struct Generated {
  std::string by;             ///< "topolaunch X.Y.Z"
  std::string at;             ///< RFC 3339
  std::string fabric_source;  ///< "live", "ibnetdiscover", "cache" or "none"
  bool operator==(const Generated&) const = default;
};

struct Topology {
  Generated generated;
  std::vector<TopologySwitch> switches;  ///< by level, then name, then guid
  std::vector<TopologyHost> hosts;       ///< natural host-name order
  std::vector<TopologyLink> links;       ///< by `from`
  std::vector<UnmappedCa> unmapped;      ///< by guid
  bool operator==(const Topology&) const = default;

  const TopologyHost* FindHost(std::string_view name) const;
  TopologyHost* FindHost(std::string_view name);
  const TopologySwitch* FindSwitch(Guid guid) const;
};

/// node-name-map: GUID -> name, in infiniband-diags' format.
using NodeNameMap = std::map<Guid, std::string>;

/// Parses an infiniband-diags node-name-map ("0x<guid> \"name\"" per line,
/// '#' comments). Every bad line is reported with `file_name:line`.
Result<NodeNameMap> ParseNodeNameMap(std::string_view text, std::string_view file_name);

/// Builds the topology from a fabric. `name_map` renames nodes by GUID (a CA
/// renamed there is a host of that name). Never fails: odd CAs go to
/// `unmapped`, links to nodes the fabric does not hold are left out of `links`.
Topology BuildTopology(const Fabric& fabric, const NodeNameMap& name_map, Generated generated);

/// Attaches `layout` to the host `host_name`, adding the host if the fabric
/// did not know it (a node without InfiniBand).
void AttachLayout(Topology& topology, const std::string& host_name, HostLayout layout);

/// Why a CA description cannot name a host, or nullopt if its first word is a
/// usable host name. Firmware defaults ("MT4129 ConnectX7   Mellanox
/// Technologies"), SHARP aggregation nodes and switch management ports are not.
std::optional<std::string> WhyNotAHostDescription(std::string_view description);

/// How WhyNotAHostDescription's reason starts for an OS default host name
/// ("localhost", "ubuntu", "(none)", ...).
inline constexpr std::string_view kOsDefaultHostName = "node description names an OS default host";

/// True for RFC 1123 host names (letters, digits, '-', '.', '_' tolerated as
/// sites use it; no leading '-', at most 253 characters).
bool IsValidHostName(std::string_view name);

/// Natural order: "node2" < "node10"; ties broken bytewise.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace topolaunch
