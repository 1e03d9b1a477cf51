// Readers for the live fabric source test: the probe's canonical output, and
// an independent, deliberately small reader of `ibnetdiscover` output that
// serves as the oracle (it does not use ParseIbnetdiscover, so the live
// source is checked against ibnetdiscover itself, not against our parser).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topolaunch/fabric.h"

namespace topolaunch::testing {

/// What live_fabric_probe printed: a fabric, or the ErrorCode name.
struct ProbeOutput {
  std::optional<Fabric> fabric;
  std::string error_code;       ///< "kUnavailable" etc.; empty on success
  std::vector<std::string> bad_lines;  ///< lines that did not parse
};

ProbeOutput ReadProbeOutput(const std::string& text);

/// One cable end as ibnetdiscover printed it.
struct OracleLink {
  PortRef remote;
  std::string width;   ///< "4X" (upper-cased from "4x")
  std::string speed;
  bool operator==(const OracleLink&) const = default;
};

struct OracleNode {
  std::string type;    ///< "Switch", "Ca", "Rt"
  int num_ports = 0;
  Guid system_guid = 0;
  std::string description;  ///< trailing spaces removed
};

struct OracleFabric {
  std::map<Guid, OracleNode> nodes;
  std::map<PortRef, OracleLink> links;      ///< both directions, as printed
  std::map<PortRef, Guid> ca_port_guids;    ///< "[1](guid)" on CA port lines
  std::vector<std::string> bad_lines;
  int Count(const std::string& type) const;
};

OracleFabric ReadIbnetdiscoverOutput(const std::string& text);

/// Differences between the live walk and ibnetdiscover's view, one line each.
std::vector<std::string> CompareWithOracle(const Fabric& live, const OracleFabric& oracle);

/// Differences between two fabrics in every field the model has. With
/// `fdr10_reads_as_qdr`, "FDR10" in `a` matches "QDR" in `b` (a libibnetdisc
/// cache does not keep the Mellanox extended PortInfo).
std::vector<std::string> CompareFabrics(const Fabric& a, const Fabric& b, bool fdr10_reads_as_qdr);

/// The first lines of a difference list, for a failure message.
std::string FirstLines(const std::vector<std::string>& lines, size_t max = 20);

}  // namespace topolaunch::testing
