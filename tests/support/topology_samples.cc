#include "support/topology_samples.h"

#include <algorithm>

namespace topolaunch::testing {

HandTopology::HandTopology() { topology_.generated = {"topolaunch 0.1.0", "2025-01-02T03:04:05Z", "ibnetdiscover"}; }

int HandTopology::NextPort(Guid node) { return ++used_ports_[node]; }

HandTopology& HandTopology::Switch(Guid guid, std::string name, int level) {
  topology_.switches.push_back({guid, std::move(name), level, 40});
  return *this;
}

static TopologyHost& HostNamed(Topology& topology, const std::string& name) {
  if (TopologyHost* host = topology.FindHost(name)) return *host;
  topology.hosts.push_back({name, {}, std::nullopt});
  return topology.hosts.back();
}

HandTopology& HandTopology::Hca(const std::string& host, Guid ca_guid, const std::string& device, Guid switch_guid,
                                int port, const std::string& speed, const std::string& width) {
  HcaAttachment a;
  a.guid = ca_guid;
  a.port_guid = ca_guid + static_cast<Guid>(port);
  a.description = device.empty() ? host : host + " " + device;
  a.device = device;
  a.port = port;
  a.switch_guid = switch_guid;
  a.switch_port = NextPort(switch_guid);
  a.width = width;
  a.speed = speed;
  a.rate_gbps = LinkRateGbps(width, speed);
  HostNamed(topology_, host).hcas.push_back(a);
  PortRef ca{ca_guid, port}, sw{switch_guid, *a.switch_port};
  topology_.links.push_back({std::min(ca, sw), std::max(ca, sw), width, speed, "Active"});
  return *this;
}

HandTopology& HandTopology::UncabledHca(const std::string& host, Guid ca_guid, const std::string& device) {
  HcaAttachment a;
  a.guid = ca_guid;
  a.description = host + " " + device;
  a.device = device;
  a.port = 1;
  HostNamed(topology_, host).hcas.push_back(a);
  return *this;
}

HandTopology& HandTopology::Cable(Guid a, Guid b, const std::string& speed, const std::string& width) {
  PortRef pa{a, NextPort(a)}, pb{b, NextPort(b)};
  topology_.links.push_back({std::min(pa, pb), std::max(pa, pb), width, speed, "Active"});
  return *this;
}

HandTopology& HandTopology::Unmapped(Guid guid, const std::string& description, const std::string& reason) {
  topology_.unmapped.push_back({guid, description, reason});
  return *this;
}

Topology HandTopology::Build() const {
  Topology t = topology_;
  std::sort(t.switches.begin(), t.switches.end(), [](const TopologySwitch& a, const TopologySwitch& b) {
    int la = a.level == 0 ? 1 << 30 : a.level, lb = b.level == 0 ? 1 << 30 : b.level;
    if (la != lb) return la < lb;
    if (a.name != b.name) return NaturalLess(a.name, b.name);
    return a.guid < b.guid;
  });
  std::sort(t.hosts.begin(), t.hosts.end(), [](const TopologyHost& a, const TopologyHost& b) { return NaturalLess(a.name, b.name); });
  for (TopologyHost& h : t.hosts)
    std::sort(h.hcas.begin(), h.hcas.end(), [](const HcaAttachment& a, const HcaAttachment& b) {
      return std::pair(a.guid, a.port) < std::pair(b.guid, b.port);
    });
  std::sort(t.links.begin(), t.links.end(), [](const TopologyLink& a, const TopologyLink& b) { return a.from < b.from; });
  std::sort(t.unmapped.begin(), t.unmapped.end(), [](const UnmappedCa& a, const UnmappedCa& b) { return a.guid < b.guid; });
  return t;
}

Topology TwoLevelTopology() {
  HandTopology t;
  t.Switch(0x1001, "MF0;leaf01:MQM8700/U1", 1).Switch(0x1002, "MF0;leaf02:MQM8700/U1", 1);
  t.Switch(0x1003, "MF0;spine01:MQM8700/U1", 2);
  t.Hca("node01", 0x2001, "mlx5_0", 0x1001).Hca("node02", 0x2002, "mlx5_0", 0x1001);
  t.Hca("node03", 0x2003, "mlx5_0", 0x1002).Hca("node04", 0x2004, "mlx5_0", 0x1002);
  t.Cable(0x1001, 0x1003).Cable(0x1001, 0x1003).Cable(0x1002, 0x1003).Cable(0x1002, 0x1003);
  return t.Build();
}

Topology ThreeLevelTopology() {
  HandTopology t;
  for (Guid i = 1; i <= 4; ++i) t.Switch(0x1000 + i, "leaf" + std::to_string(i), 1);
  t.Switch(0x1011, "agg1", 2).Switch(0x1012, "agg2", 2).Switch(0x1021, "core", 3);
  t.Switch(0x1005, "leaf5-unnamed-ca", 1).Switch(0x1013, "agg3", 2).Switch(0x1031, "lonely", 0);
  for (int h = 1; h <= 8; ++h) {
    std::string name = h < 10 ? "gpu0" + std::to_string(h) : "gpu" + std::to_string(h);
    t.Hca(name, 0x2000 + static_cast<Guid>(h), "mlx5_0", 0x1001 + static_cast<Guid>((h - 1) / 2));
  }
  t.Unmapped(0x2100, "MT4129 ConnectX7   Mellanox Technologies", "firmware default node description");
  t.Cable(0x1001, 0x1011).Cable(0x1002, 0x1011).Cable(0x1003, 0x1012).Cable(0x1004, 0x1012);
  t.Cable(0x1011, 0x1021).Cable(0x1012, 0x1021).Cable(0x1005, 0x1013).Cable(0x1013, 0x1021, "EDR");
  return t.Build();
}

Topology MultiRailTopology() {
  HandTopology t;
  t.Switch(0x1001, "su1-r0", 1).Switch(0x1002, "su1-r1", 1).Switch(0x1003, "su2-r0", 1).Switch(0x1004, "su2-r1", 1);
  t.Switch(0x1010, "spine-r0", 2).Switch(0x1011, "spine-r1", 2);
  for (int h = 1; h <= 6; ++h) {
    std::string name = "dgx0" + std::to_string(h);
    Guid su = h <= 3 ? 0 : 2;
    Guid hca0 = 0x2000 + static_cast<Guid>(h) * 16, hca1 = hca0 + 1;
    if (h == 2) std::swap(hca0, hca1);  // mlx5_1 has the smaller GUID
    if (h == 6) t.UncabledHca(name, hca0, "mlx5_0");
    else t.Hca(name, hca0, "mlx5_0", 0x1001 + su);
    t.Hca(name, hca1, "mlx5_1", 0x1002 + su);
  }
  t.Cable(0x1001, 0x1010).Cable(0x1003, 0x1010).Cable(0x1002, 0x1011).Cable(0x1004, 0x1011);
  return t.Build();
}

namespace {

// Hosts prefix1..prefixN, one HCA each on `leaf`.
void HostsOn(HandTopology& t, const std::string& prefix, int n, Guid first_ca, Guid leaf) {
  for (int i = 1; i <= n; ++i) t.Hca(prefix + std::to_string(i), first_ca + i, "mlx5_0", leaf);
}

}  // namespace

Topology HostedSpineTopology() {
  HandTopology t;
  t.Switch(0x11, "leaf1", 1).Switch(0x12, "leaf2", 1).Switch(0x13, "leaf3", 1).Switch(0x20, "spine", 1);
  HostsOn(t, "gpu0", 4, 0x100, 0x11);
  HostsOn(t, "gpu1", 4, 0x200, 0x12);
  HostsOn(t, "gpu2", 4, 0x300, 0x13);
  HostsOn(t, "store", 2, 0x400, 0x20);
  for (Guid leaf : {0x11, 0x12, 0x13}) t.Cable(leaf, 0x20).Cable(leaf, 0x20);
  return t.Build();
}

Topology LeafMeshTopology() {
  HandTopology t;
  t.Switch(0x11, "a", 1).Switch(0x12, "b", 1).Switch(0x13, "c", 1);
  HostsOn(t, "n0", 4, 0x100, 0x11);
  HostsOn(t, "n1", 4, 0x200, 0x12);
  HostsOn(t, "n2", 2, 0x300, 0x13);
  t.Cable(0x11, 0x12);
  for (int i = 0; i < 4; ++i) t.Cable(0x13, 0x11).Cable(0x13, 0x12);
  return t.Build();
}

}  // namespace topolaunch::testing
