// NCCL_MNNVL_ENABLE: what multi-node NVLink NCCL will find, and why nothing
// is set for it.
//
// NCCL's default (2, auto) reads the same NVML fabric info discovery
// records, groups ranks whose GPUs share cluster UUID and clique ID, and
// treats each clique as one node: NVLink inside it, the network between
// cliques (init.cc, mnnvl.cc, topo.cc). It turns MNNVL off for the whole
// job, without failing, when any rank's GPU is not registered. 1 would
// make that a failure at init and 0 would give the NVLink fabric away, so
// neither helps; NCCL_MNNVL_UUID and NCCL_MNNVL_CLIQUE_ID re-partition a
// rack by hand, a site decision. The rule therefore leaves the variable to
// NCCL and says what was found: the host's domain, or what keeps its GPUs
// out of one.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/nvlink_domains.h"
#include "env/env_rules.h"

namespace topolaunch {

RuleOutcome DecideMnnvl(const RuleInput& input) {
  const EnvFacts& facts = input.facts;
  const TopologyHost* host = facts.topology ? facts.topology->FindHost(facts.host) : nullptr;
  if (!host || !host->layout)
    return {"", fmt::format("the layout of {} is unknown: NCCL's default (auto) looks for an NVLink fabric itself",
                            facts.host.empty() ? "this host" : facts.host),
            ""};
  const HostLayout& layout = *host->layout;
  std::vector<std::string> unregistered;
  for (const Gpu& g : layout.gpus)
    if (g.nvlink_fabric && !g.nvlink_fabric->InDomain())
      unregistered.push_back(fmt::format("{} ({})", g.pci_bus_id, g.nvlink_fabric->state));
  // The domains of the whole topology only for a host that can be in one
  // (run asks this for every node: most clusters have no NVLink fabric).
  bool registered = std::any_of(layout.gpus.begin(), layout.gpus.end(),
                                [](const Gpu& g) { return g.nvlink_fabric && g.nvlink_fabric->InDomain(); });
  NvlinkDomains domains = registered ? ComputeNvlinkDomains(*facts.topology) : NvlinkDomains{};
  const NvlinkDomain* domain = domains.Find(host->name);
  if (!domain && unregistered.empty())
    return {"", fmt::format("no GPU of {} is in a multi-node NVLink fabric (NVML reports no fabric info: PCIe, or "
                            "NVLink inside the host only): nothing for MNNVL to use",
                            host->name),
            ""};
  std::string found =
      domain ? fmt::format("{} is in NVLink domain {} (clique {} of cluster {}, {} host(s) in the topology)", host->name,
                           domain->name, domain->clique_id, domain->cluster_uuid, domain->hosts.size())
             : fmt::format("{} has GPUs of a multi-node NVLink fabric but none registered", host->name);
  if (!unregistered.empty())
    return {"",
            found + "; NCCL's default (auto) leaves MNNVL off for the whole job while any rank's GPU is unregistered "
                    "(forcing it with 1 would fail at init)",
            fmt::format("GPU(s) of {} not registered with the NVLink fabric: {}; run `topolaunch audit` and drain "
                        "the host until its fabric state is completed",
                        host->name, fmt::join(unregistered, ", "))};
  return {"",
          found + ": NCCL's default (auto) finds it from the same NVML fabric info and treats the domain as one node, "
                  "NVLink inside and the network between domains; `topolaunch plan` keeps its hosts' ranks together",
          ""};
}

}  // namespace topolaunch
