// What the env rules decide from: the topology, which host, and what only
// that host itself can see (its RDMA ports in sysfs, its routing table).
// Everything here is data, gathered by the CLI through the adapters in
// rdma_sysfs.h and route_lookup.h, so the rules are pure and tests build
// facts by hand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topolaunch/topology.h"

namespace topolaunch {

/// One entry of an RDMA port's GID table (sysfs gids/N + gid_attrs/*/N).
struct GidEntry {
  int index = 0;
  std::string gid;   ///< "0000:0000:0000:0000:0000:ffff:0a00:0005" as sysfs prints it
  std::string type;  ///< "RoCE v2", "IB/RoCE v1", or "" when not populated
  std::string ndev;  ///< the netdev the GID belongs to, "" when unknown
  bool operator==(const GidEntry&) const = default;
};

/// One port of an RDMA device, as /sys/class/infiniband/<dev>/ports/<p> shows it.
struct RdmaPort {
  std::string device;      ///< "mlx5_0"
  int port = 1;
  std::string link_layer;  ///< "InfiniBand" or "Ethernet"
  std::string state;       ///< "ACTIVE", "DOWN", ... (the word after "4: ")
  std::vector<GidEntry> gids;  ///< populated entries only, by index
  bool operator==(const RdmaPort&) const = default;
};

/// The interface this machine would use to reach the rank-0 host.
struct SocketRoute {
  std::string interface;  ///< "ens1f0"
  std::string detail;     ///< how it was found ("route to 10.0.0.1 (node001)")
  bool operator==(const SocketRoute&) const = default;
};

/// One IPv4 interface of this machine that is up (getifaddrs, and the link
/// speed from /sys/class/net/<name>/speed).
struct SocketInterface {
  std::string name;                 ///< "ens1f0"
  std::string address;              ///< "10.1.0.5/16"
  std::optional<int> speed_mbps;    ///< absent when the driver does not say (virtual devices)
  bool operator==(const SocketInterface&) const = default;
};

/// Everything the rules may look at. `topology` must outlive the facts.
struct EnvFacts {
  const Topology* topology = nullptr;
  std::string host;                    ///< whose environment; a host of `topology`
  /// This host's RDMA ports; nullopt when they could not be read here (the
  /// env is computed for another machine).
  std::optional<std::vector<RdmaPort>> rdma_ports;
  std::string rank0_host;              ///< "" when unknown
  /// The route toward rank0_host; nullopt with `socket_route_problem` set when
  /// it could not be decided here.
  std::optional<SocketRoute> socket_route;
  std::string socket_route_problem;
  /// This machine's IPv4 interfaces that are up (loopback left out); empty
  /// when the env is computed for another machine.
  std::vector<SocketInterface> socket_interfaces;
  /// On TCP: the interfaces to stripe over, the one toward rank 0 first
  /// (StripeInterfaces, judged by `run` across every node); empty: none.
  std::vector<std::string> stripe_interfaces;
  std::string nccl_topo_file;          ///< absolute path written by --nccl-topo, or ""
};

/// The fabric NCCL will use on this host, which picks a template profile.
enum class FabricKind { kInfiniband, kRoce, kTcp };

/// "infiniband", "roce", "tcp".
std::string_view FabricKindName(FabricKind kind);
std::optional<FabricKind> ParseFabricKind(std::string_view name);

/// One RDMA port NCCL should use: on the compute fabric (InfiniBand: cabled
/// into the discovered fabric; RoCE: an active Ethernet-link-layer port).
struct ComputePort {
  std::string device;       ///< "mlx5_0"
  int port = 1;
  std::optional<Guid> guid;  ///< the CA's node GUID when known
  std::optional<double> rate_gbps;
  std::string pci_bus_id;   ///< from the host layout, "" when unknown
  bool off_walk = false;    ///< InfiniBand, seen active in sysfs on a subnet the walk did not cover
  bool operator==(const ComputePort&) const = default;
};

}  // namespace topolaunch
