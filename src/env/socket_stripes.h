// Which interfaces NCCL's socket transport may stripe over, judged across
// every host of a job (on TCP NCCL opens a net device per interface that
// NCCL_SOCKET_IFNAME matches, up to 16, and spreads its channels over them;
// the bootstrap uses the first alone).
//
// One host cannot see whether the others reach it on its other interfaces;
// `run` can, from every node's preflight: an interface counts when every
// host of the job has an interface on its IPv4 subnet (one subnet per NIC,
// as multi-homed Ethernet clusters are cabled), it is as fast as the host's
// interface toward rank 0, and it is not a virtual one (docker, veth, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "env/env_facts.h"

namespace topolaunch {

/// An IPv4 subnet: the network address (host order) and the prefix length.
struct Ipv4Subnet {
  std::uint32_t network = 0;
  int prefix = 0;
  auto operator<=>(const Ipv4Subnet&) const = default;
};

/// "10.1.0.5/16" -> 10.1.0.0/16; nullopt for anything else.
std::optional<Ipv4Subnet> SubnetOf(std::string_view address);

/// True for bridges, tunnels and container interfaces no other host reaches.
bool IsVirtualInterface(std::string_view name);

/// The subnets every host of `hosts` (each host's interfaces) has a real
/// (not virtual) interface on. Linear in all the interfaces.
std::set<Ipv4Subnet> SharedSubnets(const std::vector<std::vector<SocketInterface>>& hosts);

/// One host's interfaces to stripe over, `routed` (its interface toward
/// rank 0) first. Empty when there is nothing to stripe: `routed` is not on
/// a `shared` subnet, its speed is unknown, or no other interface qualifies.
std::vector<std::string> StripeInterfaces(const std::vector<SocketInterface>& mine, const std::set<Ipv4Subnet>& shared,
                                          const std::string& routed);

}  // namespace topolaunch
