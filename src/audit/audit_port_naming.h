// Says which switch port, host and HCA a finding is about.
//
// Findings name the exact cable end (`switch 0x.../leaf01 port 3 <-> node01
// mlx5_0 port 1`), and `plan` keys on the host. Names come from a topology
// (built from the same fabric, or the --expected baseline), so a finding on
// a cable that has disappeared is still named by the baseline.
#pragma once

#include <string>
#include <unordered_map>

#include "audit/audit_findings.h"
#include "topolaunch/topology.h"

namespace topolaunch {

class PortNaming {
 public:
  /// Keeps no reference to `topology`.
  explicit PortNaming(const Topology& topology);

  /// A finding about the cable between `a` and `b`: the switch end (or `a`
  /// when both or neither are switches) becomes switch_guid/port, the other
  /// end the peer; `host` is set when either end is a host's HCA.
  Finding ForLink(const PortRef& a, const PortRef& b) const;

  /// A finding about one port, with its peer when `remote` is given.
  Finding ForPort(const PortRef& port, const std::optional<PortRef>& remote) const;

  /// "leaf01 port 3", "node01 mlx5_0 port 1" or "0x... port 2".
  std::string Describe(const PortRef& port) const;

  bool IsSwitch(Guid guid) const { return switches_.count(guid) != 0; }
  /// The host whose HCA this is; empty for switches and unmapped CAs.
  std::string HostOf(Guid guid) const;

 private:
  struct CaName {
    std::string host;
    std::string device;
  };
  FindingPeer Peer(const PortRef& port) const;
  std::unordered_map<Guid, std::string> switches_;
  std::unordered_map<Guid, CaName> cas_;
  std::unordered_map<Guid, std::string> unmapped_;
};

}  // namespace topolaunch
