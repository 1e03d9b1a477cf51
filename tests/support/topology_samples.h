// Hand-built topologies for tests of what reads a Topology (the Slurm
// topology.conf writer, the summary): a small builder that keeps the model's
// invariants (sort orders, each cable once, HCA attachments matching links),
// and a few named fabrics used by both the pure and the system tests.
#pragma once

#include <map>
#include <string>

#include "topolaunch/topology.h"

namespace topolaunch::testing {

/// Builds a Topology piece by piece; Build() sorts everything as
/// BuildTopology() would.
class HandTopology {
 public:
  HandTopology();
  /// A switch; `level` as BuildTopology computes it (1 = leaf, 0 = no path).
  HandTopology& Switch(Guid guid, std::string name, int level);
  /// A cable from port `port` of CA `ca_guid` (RDMA device `device`, may be
  /// "") of `host` to the next free port of `switch_guid`.
  HandTopology& Hca(const std::string& host, Guid ca_guid, const std::string& device, Guid switch_guid,
                    int port = 1, const std::string& speed = "HDR", const std::string& width = "4X");
  /// A CA port of `host` cabled to nothing.
  HandTopology& UncabledHca(const std::string& host, Guid ca_guid, const std::string& device);
  /// A switch-to-switch cable between the next free ports of `a` and `b`.
  HandTopology& Cable(Guid a, Guid b, const std::string& speed = "HDR", const std::string& width = "4X");
  HandTopology& Unmapped(Guid guid, const std::string& description, const std::string& reason);
  Topology Build() const;

 private:
  int NextPort(Guid node);
  Topology topology_;
  std::map<Guid, int> used_ports_;
};

/// Two leaves (leaf01: node[01-02], leaf02: node[03-04]) under spine01;
/// switches described the managed-Mellanox way ("MF0;leaf01:MQM8700/U1").
Topology TwoLevelTopology();

/// Three levels: four leaves (each two hosts, gpu[01-08]), two level-2
/// switches agg1/agg2 over leaf pairs, one core; plus a leaf whose only CA is
/// unnamed (no hosts), its own level-2 switch, and a switch with no path to a
/// host (level 0).
Topology ThreeLevelTopology();

/// Rail-optimized: two scalable units of three hosts (dgx[01-06]), each host
/// with mlx5_0 on its unit's rail-0 leaf and mlx5_1 on its rail-1 leaf;
/// spine-r0 joins the rail-0 leaves, spine-r1 the rail-1 leaves. dgx02's
/// mlx5_1 has the smaller GUID; dgx06's mlx5_0 is unplugged.
Topology MultiRailTopology();

/// A spine with two storage hosts (store[1-2]) over three leaves of four
/// compute hosts each (gpu[01-04,11-14,21-24]), two cables to each leaf:
/// BuildTopology calls all four switches leaves.
Topology HostedSpineTopology();

/// Three leaves cabled to each other and to nothing above: a (n0[1-4]),
/// b (n1[1-4]) with one cable between them, c (n2[1-2]) with four to each.
Topology LeafMeshTopology();

}  // namespace topolaunch::testing
