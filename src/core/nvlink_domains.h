// NVLink domains: the hosts whose GPUs share one multi-node NVLink fabric
// (GB200/GB300 NVL72 and the like), found from each layout's GPU fabric info.
//
// Inside a domain GPUs talk over NVLink, between domains over InfiniBand, so
// a domain is the innermost tier of the fabric: above the host, below the IB
// leaf. NCCL puts two GPUs in one domain when both registered with the
// fabric (state completed, a cluster UUID that is not all zeros: it does not
// look at the status, `audit` does) under the same cluster UUID and clique
// ID; a host belongs to the domain most of its registered GPUs are in. A
// host whose GPUs are in several cliques, or not all registered, is still
// placed (by that majority) but is something for `audit` to report. Hosts
// without fabric info -- every PCIe and HGX machine -- are in no domain:
// each is its own, and nothing downstream changes for them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "topolaunch/layout.h"
#include "topolaunch/result.h"
#include "topolaunch/topology.h"

namespace topolaunch {

/// One domain: a (cluster UUID, clique ID) pair and the hosts in it.
struct NvlinkDomain {
  std::string name;                ///< "nvl0", "nvl1", ...: numbered by each domain's first host in natural order
  std::string cluster_uuid;
  unsigned clique_id = 0;
  std::vector<std::string> hosts;  ///< natural order
  bool operator==(const NvlinkDomain&) const = default;
};

/// Every domain of a set of hosts, and which host is in which.
struct NvlinkDomains {
  std::vector<NvlinkDomain> domains;                 ///< by name
  std::unordered_map<std::string, size_t> domain_of; ///< host -> index in `domains`; absent = in none
  bool empty() const { return domains.empty(); }
  /// The domain of `host`, or nullptr.
  const NvlinkDomain* Find(std::string_view host) const;
};

/// The (cluster UUID, clique ID) of the domain a layout's host belongs to:
/// the pair held by most of its GPUs in a domain (GpuFabric::InDomain: the
/// registration completed; ties: the smallest pair), or nullopt when none is.
std::optional<std::pair<std::string, unsigned>> HostNvlinkDomainKey(const HostLayout& layout);

/// The domains of the topology's hosts with layouts. Deterministic: depends
/// only on the hosts and their layouts, never on their order.
NvlinkDomains ComputeNvlinkDomains(const Topology& topology);

/// The same for (host, layout) pairs: the preflight's live layouts in `run`.
NvlinkDomains ComputeNvlinkDomains(const std::vector<std::pair<std::string, const HostLayout*>>& hosts);

/// topology.json's `nvlink_domains` view: [{"name", "cluster_uuid",
/// "clique_id", "hosts": [..]}], one per domain, by name.
nlohmann::ordered_json NvlinkDomainsToJson(const NvlinkDomains& domains);

/// Checks a file's `nvlink_domains` view (at "$.nvlink_domains") against
/// the domains its layouts give: the view is derived, so a hand-edited one
/// that disagrees is an error naming the first difference, not a second
/// source of truth. kBadInput, where prefixed by `file_name`.
Status CheckNvlinkDomainsView(const nlohmann::json& view, const NvlinkDomains& derived, std::string_view file_name);

}  // namespace topolaunch
