// The readable summary of a topology: what an administrator checks first --
// how many switches on which level, which hosts hang off which leaf, whether
// the rails are cabled consistently, which links run slower than the rest,
// and which CAs could not be named (and why).
//
// Host and switch lists are compressed Slurm host lists. Switches go by the
// names topology.conf gives them (slurm_switch_names.h): the switch's own
// name, with the GUID added where names collide -- 60 switches called
// "Quantum Mellanox Technologies" would tell nobody anything.
#include "discover/topology_summary.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/hostlist.h"
#include "core/nvlink_domains.h"
#include "discover/layout_summary.h"
#include "discover/slurm_switch_names.h"

namespace topolaunch {

namespace {

constexpr size_t kExamplesPerReason = 5;
constexpr size_t kLayoutsShownInFull = 8;

using NameSet = std::vector<std::string>;

std::string Compress(NameSet names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return CompressHostList(names);
}

std::string Count(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::map<Guid, std::string> DisplayNames(const Topology& topology) {
  std::vector<const TopologySwitch*> switches;
  for (const TopologySwitch& s : topology.switches) switches.push_back(&s);
  return SlurmSwitchNames(switches);
}

// "mlx5_0:1" (NCCL_IB_HCA's spelling); without a device name, the site's own
// label from the description ("node1 HCA-2" -> "HCA-2:1"), else "#<n>:<port>"
// by the HCA's place among the host's CAs.
std::string RailLabel(const TopologyHost& host, const HcaAttachment& hca) {
  if (!hca.device.empty()) return fmt::format("{}:{}", hca.device, hca.port);
  std::string_view rest = hca.description;
  size_t space = rest.find_first_of(" \t");
  if (space != std::string_view::npos) {
    rest.remove_prefix(space);
    rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(" \t")));
    std::string_view label = rest.substr(0, rest.find_first_of(" \t"));
    if (!label.empty()) return fmt::format("{}:{}", label, hca.port);
  }
  std::set<Guid> cas;
  for (const HcaAttachment& h : host.hcas) cas.insert(h.guid);
  return fmt::format("#{}:{}", std::distance(cas.begin(), cas.find(hca.guid)), hca.port);
}

void AppendLevels(const Topology& topology, std::string& out) {
  std::map<int, int> per_level;
  for (const TopologySwitch& s : topology.switches) ++per_level[s.level];
  out += "\nSwitches per level:\n";
  for (const auto& [level, count] : per_level) {
    if (level == 0) continue;
    out += fmt::format("  level {}{}: {}\n", level, level == 1 ? " (leaf)" : "", count);
  }
  if (per_level.contains(0)) out += fmt::format("  no path to a host: {}\n", per_level[0]);
}

void AppendLeaves(const Topology& topology, const std::map<Guid, std::string>& names, std::string& out) {
  std::map<Guid, NameSet> hosts_on;
  for (const TopologyHost& host : topology.hosts)
    for (const HcaAttachment& hca : host.hcas)
      if (hca.switch_guid) hosts_on[*hca.switch_guid].push_back(host.name);
  out += "\nLeaf switches (hosts cabled to each):\n";
  for (const TopologySwitch& s : topology.switches) {
    if (s.level != 1) continue;
    NameSet& hosts = hosts_on[s.guid];
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    out += fmt::format("  {} ({}): {}: {}\n", names.at(s.guid), FormatGuid(s.guid), Count(hosts.size(), "host", "hosts"),
                       hosts.empty() ? "-" : Compress(hosts));
  }
}

struct Rail {
  NameSet leaves;
  size_t hosts = 0;
  size_t uncabled = 0;
};

void AppendRails(const Topology& topology, const std::map<Guid, std::string>& names, std::string& out) {
  bool multi_rail = false;
  std::map<std::string, Rail, bool (*)(std::string_view, std::string_view)> rails(
      [](std::string_view a, std::string_view b) { return NaturalLess(a, b); });
  for (const TopologyHost& host : topology.hosts) {
    multi_rail = multi_rail || host.hcas.size() > 1;
    for (const HcaAttachment& hca : host.hcas) {
      Rail& rail = rails[RailLabel(host, hca)];
      ++rail.hosts;
      if (!hca.switch_guid) {
        ++rail.uncabled;
        continue;
      }
      auto name = names.find(*hca.switch_guid);
      rail.leaves.push_back(name != names.end() ? name->second : FormatGuid(*hca.switch_guid));
    }
  }
  if (!multi_rail) return;
  out += "\nRails (HCA port: hosts, leaf switches):\n";
  for (const auto& [label, rail] : rails) {
    NameSet leaves = rail.leaves;
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    out += fmt::format("  {}: {} on {}", label, Count(rail.hosts, "host", "hosts"),
                       Count(leaves.size(), "leaf switch", "leaf switches"));
    if (!leaves.empty()) out += ": " + Compress(leaves);
    if (rail.uncabled > 0) out += fmt::format(" ({} not cabled)", rail.uncabled);
    out += "\n";
  }
}

void AppendLinkRates(const Topology& topology, std::string& out) {
  std::map<std::pair<double, std::string>, int> rates;  // by rate, fastest first
  for (const TopologyLink& link : topology.links) {
    std::optional<double> gbps = LinkRateGbps(link.width, link.speed);
    std::string label = link.speed.empty() && link.width.empty() ? "unknown speed" : link.speed + " " + link.width;
    if (gbps) label += fmt::format(" ({} Gb/s)", *gbps);
    ++rates[{-gbps.value_or(0), label}];
  }
  if (rates.empty()) return;
  out += "\nLink rates:\n";
  for (const auto& [key, count] : rates) out += fmt::format("  {}: {}\n", key.second, Count(count, "link", "links"));
}

void AppendUnmapped(const Topology& topology, std::string& out) {
  if (topology.unmapped.empty()) return;
  std::map<std::string, std::vector<const UnmappedCa*>> by_reason;
  for (const UnmappedCa& ca : topology.unmapped) by_reason[ca.reason].push_back(&ca);
  out += fmt::format("\nUnmapped CAs (not hosts): {}\n", topology.unmapped.size());
  for (const auto& [reason, cas] : by_reason) {
    out += fmt::format("  {}: {}\n", reason, cas.size());
    for (size_t i = 0; i < cas.size() && i < kExamplesPerReason; ++i)
      out += fmt::format("    {} \"{}\"\n", FormatGuid(cas[i]->guid), cas[i]->description);
    if (cas.size() > kExamplesPerReason) out += fmt::format("    ... and {} more\n", cas.size() - kExamplesPerReason);
  }
}

// Layouts in full for a handful of hosts; past that, one line each would
// drown the fabric part, so only the count of hosts with each GPU/NIC shape.
void AppendLayouts(const Topology& topology, std::string& out) {
  std::vector<const TopologyHost*> with_layout;
  for (const TopologyHost& host : topology.hosts)
    if (host.layout) with_layout.push_back(&host);
  if (with_layout.empty()) return;
  out += fmt::format("\nHost layouts: {}\n", with_layout.size());
  if (with_layout.size() <= kLayoutsShownInFull) {
    for (const TopologyHost* host : with_layout) out += FormatLayoutSummary(host->name, *host->layout, "  ");
    return;
  }
  std::map<std::string, NameSet> shapes;
  for (const TopologyHost* host : with_layout) {
    const HostLayout& l = *host->layout;
    shapes[fmt::format("{} NUMA, {} GPUs, {} NICs", l.numa_nodes.size(), l.gpus.size(), l.nics.size())].push_back(host->name);
  }
  for (const auto& [shape, hosts] : shapes) out += fmt::format("  {}: {}\n", shape, Compress(hosts));
}

// Which hosts share an NVLink fabric clique (GB200 NVL72 racks): the tier
// below the leaf that plan keeps together.
void AppendNvlinkDomains(const Topology& topology, std::string& out) {
  NvlinkDomains domains = ComputeNvlinkDomains(topology);
  if (domains.empty()) return;
  out += fmt::format("\nNVLink domains: {}\n", domains.domains.size());
  for (const NvlinkDomain& d : domains.domains)
    out += fmt::format("  {}: {} host(s), clique {} of cluster {}: {}\n", d.name, d.hosts.size(), d.clique_id,
                       d.cluster_uuid, CompressHostList(d.hosts));
  // What `audit` reports in detail: trays outside their rack's domain.
  NameSet unregistered, split;
  for (const TopologyHost& host : topology.hosts) {
    if (!host.layout) continue;
    auto key = HostNvlinkDomainKey(*host.layout);
    bool fabric = false, other = false;
    for (const Gpu& g : host.layout->gpus) {
      if (!g.nvlink_fabric) continue;
      fabric = true;
      other = other || (key && g.nvlink_fabric->InDomain() &&
                        std::pair(g.nvlink_fabric->cluster_uuid, g.nvlink_fabric->clique_id) != *key);
    }
    if (fabric && !key) unregistered.push_back(host.name);
    if (other) split.push_back(host.name);
  }
  if (!unregistered.empty())
    out += fmt::format("  in no domain, no GPU registered with the fabric: {}\n", Compress(unregistered));
  if (!split.empty()) out += fmt::format("  with a GPU in another clique than the host's: {}\n", Compress(split));
}

}  // namespace

std::string FormatTopologySummary(const Topology& topology) {
  const Generated& g = topology.generated;
  std::string out = "Topology";
  if (g.fabric_source == "none") out += " without an InfiniBand fabric";
  else if (!g.fabric_source.empty()) out += fmt::format(" of the {} fabric", g.fabric_source);
  if (!g.by.empty() || !g.at.empty())
    out += fmt::format(" (generated{}{})", g.by.empty() ? "" : " by " + g.by, g.at.empty() ? "" : " at " + g.at);
  size_t cabled = 0;
  NameSet uncabled;
  for (const TopologyHost& host : topology.hosts) {
    bool any = std::any_of(host.hcas.begin(), host.hcas.end(), [](const HcaAttachment& h) { return h.switch_guid.has_value(); });
    if (any) ++cabled;
    else uncabled.push_back(host.name);
  }
  out += fmt::format("\n  {}, {} ({} cabled to a switch), {}, {}\n", Count(topology.switches.size(), "switch", "switches"),
                     Count(topology.hosts.size(), "host", "hosts"), cabled, Count(topology.links.size(), "link", "links"),
                     Count(topology.unmapped.size(), "unmapped CA", "unmapped CAs"));
  std::map<Guid, std::string> names = DisplayNames(topology);
  if (!topology.switches.empty()) {
    AppendLevels(topology, out);
    AppendLeaves(topology, names, out);
  }
  AppendRails(topology, names, out);
  AppendLinkRates(topology, out);
  if (!uncabled.empty() && g.fabric_source != "none") out += fmt::format("\nHosts not cabled to a switch: {}: {}\n", uncabled.size(), Compress(uncabled));
  AppendUnmapped(topology, out);
  AppendNvlinkDomains(topology, out);
  AppendLayouts(topology, out);
  return out;
}

}  // namespace topolaunch
