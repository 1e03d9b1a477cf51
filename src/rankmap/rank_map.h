// The node-rank order: which host gets node rank 0, 1, 2, ...
#pragma once

#include <string>
#include <vector>

#include "rankmap/fabric_groups.h"
#include "topolaunch/result.h"

namespace topolaunch {

struct RankMap {
  std::vector<std::string> order;    ///< node-rank order; unknown hosts last
  std::vector<std::string> unknown;  ///< hosts without a place in the fabric, natural order
};

/// Orders `hosts` so that every NVLink domain's hosts are consecutive, every
/// leaf group's hosts are consecutive (a domain cabled to two leaf groups
/// sits on their border where it can), every group at each higher level is
/// consecutive, and hosts inside a leaf group follow natural name order,
/// domain by domain. The result depends only on the set of hosts
/// and the fabric, never on the order of `hosts`. Hosts without a place in
/// `groups` (not in the fabric, or no cabled HCA) are an error (kBadInput,
/// one problem naming them all) unless `allow_unknown`: then they come last,
/// in natural order with each NVLink domain together, and are listed in
/// `unknown`. Duplicate names: kBadInput.
Result<RankMap> ComputeRankMap(const FabricGroups& groups, const std::vector<std::string>& hosts,
                               bool allow_unknown);

/// `hosts` in their order, except that each NVLink domain's hosts come
/// together where its first one is (hosts in no domain stay where they are).
std::vector<std::string> KeepNvlinkDomainsTogether(const std::vector<std::string>& hosts, const NvlinkDomains& domains);

/// Natural-order copy of `hosts` ("node2" before "node10").
std::vector<std::string> NaturalSorted(std::vector<std::string> hosts);

}  // namespace topolaunch
