// The rules that read the fabric: NCCL_IB_HCA, NCCL_CROSS_NIC and
// NCCL_IB_GID_INDEX.
//
// NCCL_CROSS_NIC is set to 1 where every NIC of the host is on one leaf
// (crossing costs nothing there), to 0 on rails joined slowly or not at all
// (rail_join.h); on well-joined rails and elsewhere NCCL's default (2: same
// NIC first, crossing when it is faster) stays.
//
// NCCL_IB_GID_INDEX is only worth setting on RoCE, and then only when the
// index NCCL would otherwise use is wrong. NCCL >= 2.21 selects, per port,
// the first valid GID of the address family NCCL_IB_ADDR_FAMILY (IPv4) and
// RoCE version NCCL_IB_ROCE_VERSION_NUM (2) — the same entry RoceV2Ipv4Gid()
// finds. Older releases use index 0, which on RoCE is the link-local
// RoCE v1 GID: not routable. topolaunch cannot know which NCCL the job
// loads (it comes with the Python wheel), so it sets the index whenever all
// compute ports agree on one that is not 0 (harmless for new NCCL, needed for
// old), and leaves it unset when the ports disagree (one variable cannot
// name two indexes; new NCCL then selects per port).
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "env/compute_ports.h"
#include "env/rail_join.h"
#include "env/env_rules.h"

namespace topolaunch {

namespace {

const TopologyHost* HostOf(const EnvFacts& facts) {
  return facts.topology ? facts.topology->FindHost(facts.host) : nullptr;
}

// "0000:0000:0000:0000:0000:ffff:0a00:0005" -> "10.0.0.5"; nullopt unless IPv4-mapped.
std::optional<std::string> MappedIpv4(std::string_view gid) {
  std::string hex;
  for (char c : gid)
    if (c != ':') hex += c;
  bool hex_digits = std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (hex.size() != 32 || !hex_digits || hex.substr(0, 20) != std::string(20, '0') ||
      (hex.substr(20, 4) != "ffff" && hex.substr(20, 4) != "FFFF"))
    return std::nullopt;
  unsigned long value = std::stoul(hex.substr(24), nullptr, 16);
  return fmt::format("{}.{}.{}.{}", value >> 24 & 255, value >> 16 & 255, value >> 8 & 255, value & 255);
}

std::string OtherHostsDiffer(const Topology& topology, const std::string& host, const std::string& value) {
  for (const TopologyHost& other : topology.hosts) {
    if (other.name == host) continue;
    std::vector<ComputePort> ports = InfinibandComputePorts(other, nullptr, nullptr);
    if (ports.empty()) continue;
    std::string theirs = FormatIbHca(ports);
    if (theirs != value) return fmt::format("; hosts differ ({}: {}), so set it per host", other.name, theirs);
  }
  return "";
}

}  // namespace

std::optional<GidEntry> RoceV2Ipv4Gid(const RdmaPort& port) {
  for (const GidEntry& entry : port.gids)
    if (entry.type == "RoCE v2" && MappedIpv4(entry.gid) && *MappedIpv4(entry.gid) != "0.0.0.0") return entry;
  return std::nullopt;
}

RuleOutcome DecideIbHca(const RuleInput& input) {
  const EnvFacts& facts = input.facts;
  if (input.fabric == FabricKind::kTcp) return {"", "no RDMA fabric: NCCL uses sockets", ""};
  std::vector<std::string> left_out;
  std::vector<ComputePort> ports = ComputePortsFor(facts, input.fabric, &left_out);
  if (ports.empty())
    return {"", "no usable RDMA port", fmt::format("{} has no named RDMA port on the compute fabric", facts.host)};
  std::string value = FormatIbHca(ports);
  bool from_sysfs = input.fabric == FabricKind::kInfiniband && FabricUnknownFor(facts);
  std::string reason =
      from_sysfs ? fmt::format("the {} active InfiniBand port(s) of {} in sysfs (its fabric was not discovered: no "
                               "leaf or subnet known; Ethernet RDMA ports stay out)",
                               ports.size(), facts.host)
      : input.fabric == FabricKind::kInfiniband
          ? fmt::format("the {} port(s) of {} cabled into the discovered fabric", ports.size(), facts.host)
          : fmt::format("the {} active RoCE port(s) of {}", ports.size(), facts.host);
  if (input.fabric == FabricKind::kInfiniband && !from_sysfs) {
    size_t walked = 0;
    for (const ComputePort& p : ports) walked += !p.off_walk;
    if (walked < ports.size())
      reason = fmt::format("the {} port(s) of {}: {} cabled into the discovered fabric, {} active on another "
                           "InfiniBand subnet under a GPU's PCIe switch",
                           ports.size(), facts.host, walked, ports.size() - walked);
  }
  reason += " ('=' makes the names exact: mlx5_1 alone would also match mlx5_10..19)";
  if (!left_out.empty()) {
    reason += "; left out: ";
    for (size_t i = 0; i < left_out.size(); ++i) reason += (i ? ", " : "") + left_out[i];
  }
  if (const TopologyHost* host = HostOf(facts); input.fabric == FabricKind::kInfiniband && !from_sysfs && host)
    // Other hosts are judged from the topology alone: so is this one here.
    reason += OtherHostsDiffer(*facts.topology, facts.host, FormatIbHca(InfinibandComputePorts(*host, nullptr, nullptr)));
  return {value, reason, ""};
}

RuleOutcome DecideCrossNic(const RuleInput& input) {
  const TopologyHost* host = HostOf(input.facts);
  if (input.fabric != FabricKind::kInfiniband || !host || FabricUnknownFor(input.facts))
    return {"", "no discovered InfiniBand fabric: leaf switches unknown, NCCL's default (2) stays", ""};
  NicLeafAnalysis leaves = AnalyzeNicLeaves(*input.facts.topology, *host);
  switch (leaves.shape) {
    case NicLeafShape::kRailOptimized: {
      // NCCL's default (2) already searches for rings and trees that stay on
      // one NIC end to end first (graph/search.cc) and keeps them on their
      // rail; 0 forbids crossing outright, which only pays where the rails
      // are joined slowly (rail_join.h), and since NCCL 2.29 a 0 on any rank
      // turns the cross-NIC paths off for the whole communicator -- every
      // rank gets the same value from the same fabric here. NCCL's rail
      // syntax for NCCL_IB_HCA is not used: older NCCL on the nodes would
      // read the extra field differently, and the version is not known here.
      RailJoin join = JudgeRailJoin(*input.facts.topology);
      if (join.slow)
        return {"0",
                leaves.detail + "; " + join.detail +
                    ": a ring that changed rails would cross that, so every ring stays on its rail",
                ""};
      return {"", leaves.detail + "; " + join.detail +
                      "; NCCL's default (2) already keeps each ring on one rail when it can, and 0 (no crossing at "
                      "all) is for rails joined slowly",
              ""};
    }
    case NicLeafShape::kSharedLeaf:
      return {"1", leaves.detail + ": using different NICs on the two ends costs nothing", ""};
    case NicLeafShape::kSingleNic:
      return {"", leaves.detail + ": nothing to cross", ""};
    case NicLeafShape::kMixed:
      break;
  }
  return {"", leaves.detail + ": neither rail-optimized nor one leaf, NCCL's default (2) stays", ""};
}

RuleOutcome DecideGidIndex(const RuleInput& input) {
  const EnvFacts& facts = input.facts;
  if (input.fabric != FabricKind::kRoce) return {"", "not RoCE: the GID index matters on RoCE only", ""};
  if (!facts.rdma_ports)
    return {"", fmt::format("the GID tables of {} cannot be read here; run topolaunch env on {}", facts.host, facts.host), ""};
  std::map<int, std::vector<std::string>> ports_by_index;
  std::string address;
  for (const RdmaPort& port : *facts.rdma_ports) {
    if (port.link_layer != "Ethernet" || port.state != "ACTIVE") continue;
    std::string label = fmt::format("{}:{}", port.device, port.port);
    std::optional<GidEntry> gid = RoceV2Ipv4Gid(port);
    if (!gid)
      return {"", label + " has no RoCE v2 GID with an IPv4 address",
              fmt::format("{} has no RoCE v2 GID with an IPv4 address: give its netdev an IPv4 address", label)};
    ports_by_index[gid->index].push_back(label);
    if (address.empty()) address = *MappedIpv4(gid->gid);
  }
  if (ports_by_index.empty()) return {"", "no active RoCE port", ""};
  if (ports_by_index.size() > 1) {
    std::string detail;
    for (const auto& [index, labels] : ports_by_index) detail += fmt::format("{}{} -> {}", detail.empty() ? "" : ", ", labels.front(), index);
    return {"", "the RoCE v2/IPv4 GID index differs between ports (" + detail +
                    "): one variable cannot name both; NCCL >= 2.21 selects per port",
            "NCCL before 2.21 would use GID index 0 (RoCE v1, link-local) on " + facts.host};
  }
  int index = ports_by_index.begin()->first;
  if (index == 0) return {"", "index 0 is already the RoCE v2/IPv4 GID: every NCCL version picks it", ""};
  return {std::to_string(index),
          fmt::format("RoCE v2 GID with IPv4 address {} is index {} on every RoCE port; NCCL >= 2.21 finds it "
                      "itself, older releases would use index 0 (RoCE v1, link-local)",
                      address, index),
          ""};
}

RuleOutcome DecideCollNet(const RuleInput& input) {
  // CollNet (NCCL's in-network reduction) is off unless NCCL_COLLNET_ENABLE=1
  // and runs only through the SHARP net plugin with a SHARP aggregation
  // manager up; neither can be seen from here, so it is never set.
  size_t sharp = 0;
  if (input.facts.topology)
    for (const UnmappedCa& ca : input.facts.topology->unmapped) sharp += ca.reason.find("SHARP") != std::string::npos;
  if (sharp == 0) return {"", "no SHARP aggregation node in the fabric: CollNet has nothing to reduce on", ""};
  return {"",
          fmt::format("the fabric has {} SHARP aggregation node(s): CollNet (in-network reduction) can use them once "
                      "the NCCL SHARP plugin and the SHARP aggregation manager are in place; then set "
                      "NCCL_COLLNET_ENABLE=1 in site.env",
                      sharp),
          ""};
}

}  // namespace topolaunch
