#include "core/nvlink_domains.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/json_checker.h"

namespace topolaunch {

const NvlinkDomain* NvlinkDomains::Find(std::string_view host) const {
  auto it = domain_of.find(std::string(host));
  return it == domain_of.end() ? nullptr : &domains[it->second];
}

std::optional<std::pair<std::string, unsigned>> HostNvlinkDomainKey(const HostLayout& layout) {
  if (std::none_of(layout.gpus.begin(), layout.gpus.end(), [](const Gpu& g) { return g.nvlink_fabric.has_value(); }))
    return std::nullopt;  // the common case, kept cheap: planning 12,500 hosts asks this of each
  std::map<std::pair<std::string, unsigned>, int> count;
  for (const Gpu& g : layout.gpus)
    if (g.nvlink_fabric && g.nvlink_fabric->InDomain()) ++count[{g.nvlink_fabric->cluster_uuid, g.nvlink_fabric->clique_id}];
  std::optional<std::pair<std::string, unsigned>> best;
  int most = 0;
  for (const auto& [key, n] : count)  // ascending keys: the first of equals wins
    if (n > most) best = key, most = n;
  return best;
}

namespace {

using Members = std::map<std::pair<std::string, unsigned>, std::vector<std::string>>;

NvlinkDomains FromMembers(Members members) {
  NvlinkDomains out;
  for (auto& [key, names] : members) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
    out.domains.push_back({"", key.first, key.second, std::move(names)});
  }
  std::sort(out.domains.begin(), out.domains.end(), [](const NvlinkDomain& a, const NvlinkDomain& b) {
    return NaturalLess(a.hosts.front(), b.hosts.front());
  });
  for (size_t i = 0; i < out.domains.size(); ++i) {
    out.domains[i].name = fmt::format("nvl{}", i);
    for (const std::string& host : out.domains[i].hosts) out.domain_of.emplace(host, i);
  }
  return out;
}

}  // namespace

NvlinkDomains ComputeNvlinkDomains(const std::vector<std::pair<std::string, const HostLayout*>>& hosts) {
  Members members;
  for (const auto& [host, layout] : hosts)
    if (layout)
      if (auto key = HostNvlinkDomainKey(*layout)) members[*key].push_back(host);
  return FromMembers(std::move(members));
}

NvlinkDomains ComputeNvlinkDomains(const Topology& topology) {
  Members members;
  for (const TopologyHost& h : topology.hosts)
    if (h.layout)
      if (auto key = HostNvlinkDomainKey(*h.layout)) members[*key].push_back(h.name);
  return FromMembers(std::move(members));
}

nlohmann::ordered_json NvlinkDomainsToJson(const NvlinkDomains& domains) {
  nlohmann::ordered_json view = nlohmann::ordered_json::array();
  for (const NvlinkDomain& d : domains.domains)
    view.push_back({{"name", d.name}, {"cluster_uuid", d.cluster_uuid}, {"clique_id", d.clique_id}, {"hosts", d.hosts}});
  return view;
}

Status CheckNvlinkDomainsView(const nlohmann::json& view, const NvlinkDomains& derived, std::string_view file_name) {
  JsonChecker c{std::string(file_name)};
  const std::string path = "$.nvlink_domains";
  if (!view.is_array()) {
    c.Report(path, "expected an array of domains");
    return c.TakeError();
  }
  std::vector<NvlinkDomain> given;
  for (size_t i = 0; i < view.size(); ++i) {
    std::string p = JsonIndex(path, i);
    if (!view[i].is_object()) {
      c.Report(p, "expected an object");
      continue;
    }
    NvlinkDomain d;
    d.name = c.String(view[i], p, "name").value_or("");
    d.cluster_uuid = c.String(view[i], p, "cluster_uuid").value_or("");
    d.clique_id = static_cast<unsigned>(c.Integer(view[i], p, "clique_id", 0, 0xffffffffLL).value_or(0));
    d.hosts = c.StringArray(view[i], p, "hosts");
    given.push_back(std::move(d));
  }
  if (!c.ok()) return c.TakeError();
  const std::string why = "the view is derived from hosts[].layout.gpus[].nvlink_fabric, and they say otherwise";
  for (size_t i = 0; i < std::max(given.size(), derived.domains.size()); ++i) {
    std::string p = JsonIndex(path, i);
    if (i >= derived.domains.size()) {
      c.Report(p, fmt::format("domain \"{}\" is not in the layouts ({} domain(s) there); {}", given[i].name,
                              derived.domains.size(), why));
      break;
    }
    const NvlinkDomain& want = derived.domains[i];
    if (i >= given.size()) {
      c.Report(path, fmt::format("domain \"{}\" ({} host(s), first {}) is missing; {}", want.name, want.hosts.size(),
                                 want.hosts.front(), why));
      break;
    }
    if (given[i] != want) {
      c.Report(p, fmt::format("expected \"{}\": cluster {} clique {} with {} host(s) from {}; {}", want.name,
                              want.cluster_uuid, want.clique_id, want.hosts.size(), want.hosts.front(), why));
      break;
    }
  }
  if (!c.ok()) return c.TakeError();
  return Ok{};
}

}  // namespace topolaunch
