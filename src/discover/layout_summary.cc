// What a person checks first in a node's layout: which CPUs and memory sit
// on which NUMA node, where each GPU and NIC hangs, and whether every GPU has
// an RDMA NIC close to it (same PCIe switch is what GPUDirect RDMA wants).
#include "discover/layout_summary.h"

#include <algorithm>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string Numa(int numa) { return numa < 0 ? "NUMA ?" : fmt::format("NUMA {}", numa); }

std::string Link(const std::optional<PcieLink>& link) {
  return link ? fmt::format(", PCIe {:.1f} GB/s", link->gbytes_per_s) : "";
}

// The closest RDMA NIC of a GPU: relations are ordered closest first.
const GpuNicPath* NearestNic(const HostLayout& layout, const std::string& gpu) {
  const GpuNicPath* best = nullptr;
  for (const GpuNicPath& p : layout.gpu_nic_paths)
    if (p.gpu == gpu && (!best || p.relation < best->relation)) best = &p;
  return best;
}

}  // namespace

std::string FormatLayoutSummary(const std::string& host, const HostLayout& layout, const std::string& indent) {
  std::string out = fmt::format("{}{} ({}{}): {} {}, {} cores, {} PUs", indent, host, layout.source,
                                layout.architecture.empty() ? "" : ", " + layout.architecture, layout.packages,
                                layout.packages == 1 ? "package" : "packages",
                                layout.cores, layout.pus);
  if (layout.nvml) out += fmt::format("; NVML: {}", layout.nvml->status);
  out += "\n";
  for (const NumaNode& n : layout.numa_nodes)
    out += fmt::format("{}  NUMA {}: CPUs {}, {:.1f} GiB\n", indent, n.os_index, FormatCpuList(n.cpus),
                       static_cast<double>(n.memory_bytes) / (1ull << 30));
  if (layout.gpus.empty()) out += fmt::format("{}  GPUs: none visible\n", indent);
  for (size_t i = 0; i < layout.gpus.size(); ++i) {
    const Gpu& g = layout.gpus[i];
    out += fmt::format("{}  GPU {}: {} {}{} ({}{})", indent, i, g.pci_bus_id, g.vendor, g.model.empty() ? "" : " " + g.model,
                       Numa(g.numa), Link(g.link));
    if (const GpuNicPath* nic = NearestNic(layout, g.pci_bus_id))
      out += fmt::format(" -> nearest NIC {} ({})", nic->nic, PcieRelationName(nic->relation));
    if (const std::optional<GpuFabric>& f = g.nvlink_fabric) {
      out += fmt::format("; NVLink fabric clique {} of cluster {}, {}", f->clique_id, f->cluster_uuid,
                         f->state == "completed" ? "registered" : f->state);
      if (f->status != "ok") out += fmt::format(" ({})", f->status);
      for (const std::string& issue : f->health) out += ", " + issue;
    }
    out += "\n";
  }
  for (const Nic& n : layout.nics) {
    std::string netdevs;
    for (const std::string& d : n.netdevs) netdevs += (netdevs.empty() ? "" : ",") + d;
    out += fmt::format("{}  NIC {} ({}{}{}, {}{})\n", indent, n.name, n.kind,
                       n.pci_bus_id.empty() ? "" : " " + n.pci_bus_id, netdevs.empty() ? "" : ", " + netdevs,
                       Numa(n.numa), Link(n.link));
  }
  return out;
}

}  // namespace topolaunch
