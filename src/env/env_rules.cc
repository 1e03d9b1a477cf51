// The rules that do not read the fabric, and the table of all rules.
#include "env/env_rules.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "env/socket_stripes.h"

namespace topolaunch {

namespace {

constexpr EnvRule kRules[] = {
    {"CUDA_DEVICE_ORDER", DecideCudaDeviceOrder},
    {"NCCL_CROSS_NIC", DecideCrossNic},
    {"NCCL_IB_GID_INDEX", DecideGidIndex},
    {"NCCL_COLLNET_ENABLE", DecideCollNet},
    {"NCCL_IB_HCA", DecideIbHca},
    {"NCCL_MNNVL_ENABLE", DecideMnnvl},
    {"NCCL_SOCKET_IFNAME", DecideSocketIfname},
    {"NCCL_TOPO_FILE", DecideTopoFile},
    {"TORCH_NCCL_ASYNC_ERROR_HANDLING", DecideTorchAsyncErrorHandling},
};

}  // namespace

std::string_view FabricKindName(FabricKind kind) {
  switch (kind) {
    case FabricKind::kInfiniband: return "infiniband";
    case FabricKind::kRoce: return "roce";
    case FabricKind::kTcp: return "tcp";
  }
  return "tcp";
}

std::optional<FabricKind> ParseFabricKind(std::string_view name) {
  for (FabricKind kind : {FabricKind::kInfiniband, FabricKind::kRoce, FabricKind::kTcp})
    if (FabricKindName(kind) == name) return kind;
  return std::nullopt;
}

std::span<const EnvRule> EnvRules() { return kRules; }

const EnvRule* FindEnvRule(std::string_view name) {
  for (const EnvRule& rule : kRules)
    if (rule.name == name) return &rule;
  return nullptr;
}

// On TCP the socket transport is the data path, and NCCL stripes it over
// every interface NCCL_SOCKET_IFNAME matches (transport/net_socket.cc finds
// up to 16); the bootstrap takes the first match alone. One host cannot see
// whether the others reach it on its other interfaces: `run` judges that
// across its nodes (EnvFacts::stripe_interfaces); otherwise the value stays
// the one toward rank 0 and the reason names the interfaces as fast as it.
std::string AlikeInterfacesNote(const EnvFacts& facts, const std::string& routed) {
  std::optional<int> speed;
  for (const SocketInterface& i : facts.socket_interfaces)
    if (i.name == routed) speed = i.speed_mbps;
  if (!speed) return "";
  std::vector<std::string> alike;
  std::string names = routed;
  for (const SocketInterface& i : facts.socket_interfaces)
    if (i.name != routed && !IsVirtualInterface(i.name) && i.speed_mbps == speed) {
      alike.push_back(fmt::format("{} ({})", i.name, i.address));
      names += "," + i.name;
    }
  if (alike.empty()) return "";
  return fmt::format("; as fast ({} Mb/s): {}. NCCL's socket transport would stripe over all of them: where every "
                     "host reaches every other on each (one subnet per NIC), set NCCL_SOCKET_IFNAME=={} in site.env",
                     *speed, fmt::join(alike, ", "), names);
}

RuleOutcome DecideSocketIfname(const RuleInput& input) {
  const EnvFacts& facts = input.facts;
  if (!facts.socket_route) return {"", facts.socket_route_problem.empty() ? "the route to the rank-0 host is unknown" : facts.socket_route_problem, ""};
  const std::string& name = facts.socket_route->interface;
  if (name == "lo" || name.starts_with("docker"))
    return {"", fmt::format("the route toward the rank-0 host leaves through {}, which other hosts cannot reach", name),
            fmt::format("{} reaches the rank-0 host only through {}: pass --rank0-host with the name other hosts use", facts.host, name)};
  std::string reason = fmt::format("the interface toward the rank-0 host: {} ('=' makes the name exact)", facts.socket_route->detail);
  if (input.fabric == FabricKind::kTcp && facts.stripe_interfaces.size() >= 2 && facts.stripe_interfaces.front() == name) {
    std::string names = fmt::format("{}", fmt::join(facts.stripe_interfaces, ","));
    return {"=" + names,
            fmt::format("{}, then {}: each on a subnet every host of the job has an interface on, and as fast, so "
                        "NCCL's socket transport stripes over them (the bootstrap uses the first)",
                        reason, fmt::join(facts.stripe_interfaces.begin() + 1, facts.stripe_interfaces.end(), ", ")),
            ""};
  }
  if (input.fabric == FabricKind::kTcp) reason += AlikeInterfacesNote(facts, name);
  return {"=" + name, reason, ""};
}

// NCCL_TOPO_FILE wins over NCCL's own detection (xml.cc: a device the file
// gives a parent is not looked up in sysfs), so it is set only when asked.
RuleOutcome DecideTopoFile(const RuleInput& input) {
  if (input.facts.nccl_topo_file.empty())
    return {"",
            "not set: where NCCL can read the PCI tree (bare metal, containers with the host's /sys) its own detection "
            "is the better choice and follows hardware changes; write a file with --nccl-topo FILE where the tree "
            "is hidden or virtual (VMs, some containers) or the layout was gathered on another machine",
            ""};
  return {input.facts.nccl_topo_file,
          fmt::format("the NCCL topology written by --nccl-topo from {}'s hwloc layout: its PCIe switches as NCCL "
                      "would find them in sysfs, GPUs numbered by NCCL itself; worth it where NCCL cannot see the PCI "
                      "tree (VMs, containers) or for a layout gathered elsewhere, while on bare metal NCCL's own "
                      "detection is as good",
                      input.facts.host),
          ""};
}

RuleOutcome DecideCudaDeviceOrder(const RuleInput&) {
  return {"PCI_BUS_ID",
          "number GPUs by PCI bus ID (domain, bus, device), the order nvidia-smi and NCCL's topology list them "
          "in and topolaunch's plan binds by (CUDA's default is fastest first)",
          ""};
}

RuleOutcome DecideTorchAsyncErrorHandling(const RuleInput&) {
  // ProcessGroupNCCL accepts 0 (no handling), 1 (abort communicators and tear
  // the process down), 2 (abort only), 3 (tear down without abort, the
  // default of recent PyTorch); torchrun's agent sets 1 when it is unset.
  return {"1",
          "on an NCCL error or timeout, abort the communicators and end the process so the launcher sees the "
          "failure (1 is what torchrun sets; launched any other way the default differs by PyTorch version)",
          ""};
}

}  // namespace topolaunch
