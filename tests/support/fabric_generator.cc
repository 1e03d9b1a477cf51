// Generated fabrics: a small builder that collects switches, CAs and cables,
// then renders them the way ibnetdiscover prints a fabric, so that ibsim can
// load the text and ibnetdiscover (through ibsim) gives back the same nodes,
// GUIDs, descriptions, LIDs and cables.
#include "support/fabric_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace topolaunch::testing {

namespace {

constexpr std::uint64_t kGuidBase = 0x98039b0300000000;  // an NVIDIA OUI
constexpr std::uint64_t kSwitchGuids = kGuidBase + 0x100000;
constexpr std::uint64_t kCaGuids = kGuidBase + 0x800000;  // step 0x10: room for port GUIDs

struct End {
  int node = -1;
  int port = 0;
};

struct GenNode {
  bool is_switch = false;
  std::string description;
  int ports = 0;
  std::uint64_t guid = 0;
  std::uint64_t system_guid = 0;
  int lid = 0;             // switches: port 0; CAs: first port (others follow)
  std::vector<End> peers;  // by port number; node -1 = not cabled
};

// Smallest real-looking port count that holds `used` ports.
int SwitchPorts(int used) {
  for (int n : {40, 64, 128})
    if (used <= n) return n;
  return 254;
}

std::string Numbered(std::string_view prefix, int number, int count) {
  int width = std::max<int>(2, static_cast<int>(std::to_string(count).size()));
  return fmt::format("{}{:0{}}", prefix, number, width);
}

// Host numbers 1..n; shuffled: a fixed permutation i -> (i*k + n/2) mod n
// with k coprime to n, so names do not follow the cabling.
class HostNamer {
 public:
  HostNamer(std::string prefix, int count, bool shuffled) : prefix_(std::move(prefix)), count_(count) {
    if (!shuffled || count < 2) return;
    stride_ = std::max(1, count * 618 / 1000);
    while (std::gcd(stride_, count) != 1) ++stride_;
    offset_ = count / 2;
  }
  std::string operator()(int i) const { return Numbered(prefix_, (i * stride_ + offset_) % count_ + 1, count_); }

 private:
  std::string prefix_;
  int count_;
  int stride_ = 1;
  int offset_ = 0;
};

class NetBuilder {
 public:
  explicit NetBuilder(std::string speed) : link_("4x" + speed) {}

  int AddSwitch(std::string description, int level, GeneratedFabric& g) {
    g.switch_levels[description] = level;
    GenNode n{true, std::move(description), 0, kSwitchGuids + switches_++, 0, 0, {}};
    n.system_guid = n.guid;
    return Add(std::move(n));
  }
  // system_of: the CA whose GUID is this one's sysimgguid (one host, several HCAs).
  int AddCa(std::string description, int ports, int system_of = -1) {
    GenNode n{false, std::move(description), ports, kCaGuids + 0x10 * cas_++, 0, 0, {}};
    n.system_guid = system_of >= 0 ? nodes_[system_of].guid : n.guid;
    return Add(std::move(n));
  }
  void Cable(End a, End b) {
    Peer(a) = b;
    Peer(b) = a;
  }
  void Finish(GeneratedFabric& g);

 private:
  int Add(GenNode n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  End& Peer(End e) {
    std::vector<End>& peers = nodes_[e.node].peers;
    if (static_cast<int>(peers.size()) <= e.port) peers.resize(e.port + 1);
    return peers[e.port];
  }
  int PeerLid(End e) const {
    const GenNode& n = nodes_[e.node];
    return n.is_switch ? n.lid : n.lid + e.port - 1;
  }
  std::string Id(const GenNode& n) const { return fmt::format("\"{}-{:016x}\"", n.is_switch ? 'S' : 'H', n.guid); }
  void Render(const GenNode& n, std::string& out) const;

  std::string link_;
  std::vector<GenNode> nodes_;
  int switches_ = 0;
  int cas_ = 0;
};

void NetBuilder::Render(const GenNode& n, std::string& out) const {
  out += fmt::format("\nvendid=0x2c9\ndevid=0x{:x}\nsysimgguid=0x{:x}\n",
                     n.is_switch ? (n.ports > 40 ? 0xd2f2 : 0xd2f0) : 0x101b, n.system_guid);
  if (n.is_switch) {
    out += fmt::format("switchguid=0x{0:x}({0:x})\nSwitch\t{1} {2}\t\t# \"{3}\" enhanced port 0 lid {4} lmc 0\n",
                       n.guid, n.ports, Id(n), n.description, n.lid);
  } else {
    out += fmt::format("caguid=0x{:x}\nCa\t{} {}\t\t# \"{}\"\n", n.guid, n.ports, Id(n), n.description);
  }
  for (int port = 1; port < static_cast<int>(n.peers.size()); ++port) {
    End peer = n.peers[port];
    if (peer.node < 0) continue;
    const GenNode& p = nodes_[peer.node];
    std::string peer_guid = p.is_switch ? "" : fmt::format("({:x}) ", p.guid + peer.port);
    if (n.is_switch) {
      out += fmt::format("[{}]\t{}[{}]{}\t\t# \"{}\" lid {} {}\n", port, Id(p), peer.port, peer_guid, p.description,
                         PeerLid(peer), link_);
    } else {
      out += fmt::format("[{}]({:x}) \t{}[{}]{}\t\t# lid {} lmc 0 \"{}\" lid {} {}\n", port, n.guid + port, Id(p),
                         peer.port, peer_guid.empty() ? "" : " " + peer_guid, n.lid + port - 1, p.description,
                         PeerLid(peer), link_);
    }
  }
}

void NetBuilder::Finish(GeneratedFabric& g) {
  int lid = 1;
  for (bool switches : {true, false}) {
    for (GenNode& n : nodes_) {
      if (n.is_switch != switches) continue;
      if (n.is_switch) n.ports = SwitchPorts(static_cast<int>(n.peers.size()) - 1);
      n.lid = lid;
      lid += n.is_switch ? 1 : n.ports;
      g.ibsim_ports += n.is_switch ? n.ports + 1 : n.ports;
      (n.is_switch ? g.switches : g.cas) += 1;
    }
  }
  const GenNode& first = nodes_.front();
  g.netfile = fmt::format(
      "#\n# Topology file: generated by topolaunch's test fabric generator\n#\n"
      "# Initiated from node {0:016x} port {0:016x}\n",
      first.guid);
  g.netfile.reserve(nodes_.size() * 400);
  for (bool switches : {true, false})
    for (const GenNode& n : nodes_)
      if (n.is_switch == switches) Render(n, g.netfile);
}

void AddHost(GeneratedFabric& g, const std::string& host, const std::string& leaf) {
  if (g.host_leaves.find(host) == g.host_leaves.end()) g.hosts.push_back(host);
  g.host_leaves[host].push_back(leaf);
}

}  // namespace

IbsimLimits IbsimLimitsFor(const GeneratedFabric& fabric) {
  return {std::max(2048, 2 * (fabric.switches + fabric.cas)), std::max(256, 2 * fabric.switches),
          std::max(13312, 2 * fabric.ibsim_ports)};
}

std::vector<std::string> IbsimSizeFlags(const GeneratedFabric& fabric) {
  IbsimLimits l = IbsimLimitsFor(fabric);
  return {"-N", std::to_string(l.nodes), "-S", std::to_string(l.switches), "-P", std::to_string(l.ports)};
}

GeneratedFabric TwoLevelFatTree(const FatTreeSpec& spec) {
  GeneratedFabric g;
  NetBuilder b(spec.speed);
  const int hosts_per_leaf = spec.hosts_per_leaf, uplinks = spec.uplinks_per_spine;
  std::vector<int> leaves, spines;
  for (int l = 0; l < spec.leaves; ++l) leaves.push_back(b.AddSwitch(Numbered("leaf", l + 1, spec.leaves), 1, g));
  for (int s = 0; s < spec.spines; ++s) spines.push_back(b.AddSwitch(Numbered("spine", s + 1, spec.spines), 2, g));
  HostNamer name(spec.host_prefix, spec.leaves * hosts_per_leaf, spec.shuffled_names);
  for (int l = 0; l < spec.leaves; ++l) {
    for (int h = 0; h < hosts_per_leaf; ++h) {
      std::string host = name(l * hosts_per_leaf + h);
      int ca = b.AddCa(host + " mlx5_0", 1);
      b.Cable({leaves[l], h + 1}, {ca, 1});
      AddHost(g, host, Numbered("leaf", l + 1, spec.leaves));
    }
    for (int s = 0; s < spec.spines; ++s)
      for (int u = 0; u < uplinks; ++u)
        b.Cable({leaves[l], hosts_per_leaf + s * uplinks + u + 1}, {spines[s], l * uplinks + u + 1});
  }
  b.Finish(g);
  return g;
}

GeneratedFabric ThreeLevelFatTree(const ThreeLevelSpec& spec) {
  GeneratedFabric g;
  NetBuilder b(spec.speed);
  const int leaf_count = spec.pods * spec.leaves_per_pod, spine_count = spec.pods * spec.spines_per_pod;
  std::vector<int> leaves, spines, cores;
  for (int l = 0; l < leaf_count; ++l) leaves.push_back(b.AddSwitch(Numbered("leaf", l + 1, leaf_count), 1, g));
  for (int s = 0; s < spine_count; ++s) spines.push_back(b.AddSwitch(Numbered("spine", s + 1, spine_count), 2, g));
  for (int c = 0; c < spec.cores; ++c) cores.push_back(b.AddSwitch(Numbered("core", c + 1, spec.cores), 3, g));
  HostNamer name(spec.host_prefix, leaf_count * spec.hosts_per_leaf, false);
  for (int l = 0; l < leaf_count; ++l) {
    int pod = l / spec.leaves_per_pod, in_pod = l % spec.leaves_per_pod;
    for (int h = 0; h < spec.hosts_per_leaf; ++h) {
      std::string host = name(l * spec.hosts_per_leaf + h);
      b.Cable({leaves[l], h + 1}, {b.AddCa(host + " mlx5_0", 1), 1});
      AddHost(g, host, Numbered("leaf", l + 1, leaf_count));
    }
    for (int s = 0; s < spec.spines_per_pod; ++s)
      b.Cable({leaves[l], spec.hosts_per_leaf + s + 1}, {spines[pod * spec.spines_per_pod + s], in_pod + 1});
  }
  for (int s = 0; s < spine_count; ++s)
    for (int c = 0; c < spec.cores; ++c) b.Cable({spines[s], spec.leaves_per_pod + c + 1}, {cores[c], s + 1});
  b.Finish(g);
  return g;
}

GeneratedFabric RailOptimizedPod(const RailSpec& spec) {
  GeneratedFabric g;
  NetBuilder b(spec.speed);
  std::vector<int> leaves, spines;
  for (int k = 0; k < spec.rails; ++k) leaves.push_back(b.AddSwitch(Numbered("leaf", k + 1, spec.rails), 1, g));
  for (int s = 0; s < spec.spines; ++s) spines.push_back(b.AddSwitch(Numbered("spine", s + 1, spec.spines), 2, g));
  HostNamer name(spec.host_prefix, spec.hosts, false);
  for (int h = 0; h < spec.hosts; ++h) {
    std::string host = name(h);
    int first = -1;
    for (int k = 0; k < spec.rails; ++k) {
      int ca = b.AddCa(fmt::format("{} mlx5_{}", host, k), 1, first);
      if (first < 0) first = ca;
      b.Cable({leaves[k], h + 1}, {ca, 1});
      AddHost(g, host, Numbered("leaf", k + 1, spec.rails));
    }
  }
  for (int k = 0; k < spec.rails; ++k)
    for (int s = 0; s < spec.spines; ++s) b.Cable({leaves[k], spec.hosts + s + 1}, {spines[s], k + 1});
  b.Finish(g);
  return g;
}

GeneratedFabric FabricWithUnmappedCas() {
  GeneratedFabric g;
  NetBuilder b("HDR");
  int leaves[2] = {b.AddSwitch("leaf01", 1, g), b.AddSwitch("leaf02", 1, g)};
  int spine = b.AddSwitch("spine01", 2, g);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      std::string host = Numbered("node", l * 2 + h + 1, 4);
      b.Cable({leaves[l], h + 1}, {b.AddCa(host + " mlx5_0", 1), 1});
      AddHost(g, host, Numbered("leaf", l + 1, 2));
    }
    b.Cable({leaves[l], 3}, {spine, l + 1});
  }
  g.unmapped_descriptions = {"MT4123 ConnectX6   Mellanox Technologies", "Mellanox Technologies Aggregation Node", " "};
  b.Cable({leaves[0], 4}, {b.AddCa(g.unmapped_descriptions[0], 1), 1});
  b.Cable({spine, 3}, {b.AddCa(g.unmapped_descriptions[1], 1), 1});
  b.Cable({leaves[1], 4}, {b.AddCa(g.unmapped_descriptions[2], 1), 1});
  b.Finish(g);
  return g;
}

}  // namespace topolaunch::testing
