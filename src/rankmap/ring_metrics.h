// Ring crossings: how often a ring over the hosts, in a given order, leaves
// a leaf (or a spine group, a pod) and comes back.
//
// A crossing is a pair of consecutive hosts (including last -> first) that
// are not in the same group. At the leaf level, "the same group" means the
// same *leaf group* -- the same set of leaves (see fabric_groups.h). For an
// ordinary host that is SPEC.md's "share a leaf switch". For multi-homed
// hosts it is deliberately stricter than "their leaf sets intersect": on a
// rail-optimized fabric NCCL sends rail k's traffic from HCA k to HCA k, so
// two hosts that share rail 0's leaf but not rail 1's still push rail 1
// through a spine. Hosts outside the fabric share no group with anyone.
//
// The lower bound is the number of distinct groups the hosts use (0 when one
// group holds them all): a ring must enter and leave every group.
#pragma once

#include <string>
#include <vector>

#include "rankmap/fabric_groups.h"
#include "topolaunch/plan.h"

namespace topolaunch {

/// One id per host of `order` naming its group at `level` (1 = leaf group);
/// hosts not in `groups` get ids no other host has.
std::vector<long> GroupIds(const FabricGroups& groups, const std::vector<std::string>& order, int level);

/// Consecutive pairs, last -> first included, with different ids (0 for < 2 hosts).
int RingCrossings(const std::vector<long>& ids);

/// Distinct ids; 0 when there is only one.
int RingLowerBound(const std::vector<long>& ids);

/// One id per host of `order` naming its NVLink domain; hosts in none get
/// ids no other host has.
std::vector<long> NvlinkDomainIds(const NvlinkDomains& domains, const std::vector<std::string>& order);

/// Every level's crossings for `order` (the plan), natural name order and
/// `given` (the order the user listed the hosts in). With no fabric (null
/// `groups`) every host is its own group. NVLink domains come from
/// `domains`, or from `groups` when it is null; their level is filled only
/// when a host of `order` is in one.
PlanMetrics ComputeMetrics(const FabricGroups* groups, const std::vector<std::string>& order,
                           const std::vector<std::string>& given, const NvlinkDomains* domains = nullptr);

}  // namespace topolaunch
