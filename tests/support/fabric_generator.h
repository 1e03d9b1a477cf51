// Generated InfiniBand fabrics in ibnetdiscover's text format, which is also
// ibsim's net-file format: the same text feeds ibsim (live discovery), the
// dump parser, and the expectations tests check against.
//
// Shape of the text: switches first, then CAs, as ibnetdiscover prints them;
// every cable listed from both ends, every node with vendid/devid/
// sysimgguid and switchguid=/caguid= lines (ibsim takes GUIDs from those),
// CA port GUIDs = CA GUID + port number (what ibsim reports back), LIDs
// written (switches first), links "4x<speed>". Names: switches "leaf01",
// "spine01", "core01"; host CAs "node01 mlx5_0" (numbers zero-padded to at
// least two digits, wider when there are more). Switch port counts are 40,
// 64, 128 or 254, the smallest that fits. Lines stay under ibsim's 255
// characters and descriptions under its 63.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace topolaunch::testing {

struct GeneratedFabric {
  std::string netfile;  ///< ibnetdiscover/ibsim text
  int switches = 0;
  int cas = 0;                     ///< all CA nodes, unmapped ones too
  std::vector<std::string> hosts;  ///< host names, as generated
  /// host -> leaf switch node descriptions it is cabled to (one per HCA port)
  std::map<std::string, std::vector<std::string>> host_leaves;
  /// switch node description -> expected level (1 = leaf)
  std::map<std::string, int> switch_levels;
  /// CA descriptions that are not hosts and must end up in `unmapped`
  std::vector<std::string> unmapped_descriptions;
  int ibsim_ports = 0;  ///< ports ibsim allocates (switch port 0 included)
};

/// ibsim's table sizes (-N, -S, -P); 0 keeps ibsim's default (2048 nodes,
/// 256 switches, 13312 ports).
struct IbsimLimits {
  int nodes = 0;
  int switches = 0;
  int ports = 0;
};

/// ibsim table sizes large enough for `fabric`, never below ibsim's defaults.
IbsimLimits IbsimLimitsFor(const GeneratedFabric& fabric);

/// The same as ibsim's command-line flags ("-N", "2048", "-S", ...).
std::vector<std::string> IbsimSizeFlags(const GeneratedFabric& fabric);

struct FatTreeSpec {
  int leaves = 4;
  int hosts_per_leaf = 4;
  int spines = 2;
  int uplinks_per_spine = 1;  ///< cables from each leaf to each spine
  std::string speed = "HDR";  ///< link speed token for every cable
  /// Host names not following the cabling: a fixed permutation of numbers.
  bool shuffled_names = false;
  std::string host_prefix = "node";
};

/// Two-level fat tree; oversubscription = hosts_per_leaf / (spines*uplinks).
GeneratedFabric TwoLevelFatTree(const FatTreeSpec& spec);

struct ThreeLevelSpec {
  int pods = 2;
  int leaves_per_pod = 2;
  int hosts_per_leaf = 2;
  int spines_per_pod = 2;  ///< level-2 switches in each pod
  int cores = 2;           ///< level-3 switches, each cabled to every spine
  std::string speed = "HDR";
  std::string host_prefix = "node";
};

/// Three-level fat tree (leaf, pod spine, core).
GeneratedFabric ThreeLevelFatTree(const ThreeLevelSpec& spec);

struct RailSpec {
  int hosts = 4;
  int rails = 8;  ///< HCAs per host; HCA k goes to rail leaf k
  int spines = 2;
  std::string speed = "HDR";
  std::string host_prefix = "node";
};

/// Rail-optimized pod: host h's HCA k ("nodeNN mlx5_k", one CA node per HCA,
/// the host's CAs sharing a sysimgguid) on rail leaf k ("leaf0<k+1>"); every
/// rail leaf has one cable to every spine.
GeneratedFabric RailOptimizedPod(const RailSpec& spec);

/// A small two-level tree (2 leaves x 2 hosts, 1 spine) plus CAs that are not
/// hosts: a firmware-default description on leaf01, a SHARP "Aggregation
/// Node" on the spine (as on a Quantum switch), and an empty description on
/// leaf02. The empty one is written as a single blank: ibsim replaces a truly
/// empty description with the node id ("H-..."), which would read as a host.
/// `unmapped_descriptions` holds the three descriptions exactly as written.
GeneratedFabric FabricWithUnmappedCas();

}  // namespace topolaunch::testing
