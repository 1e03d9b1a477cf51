// Binding local ranks to the parts of a host.
//
// GPU ranks: local rank i drives the i-th visible GPU in PCI bus order --
// the order CUDA uses with CUDA_DEVICE_ORDER=PCI_BUS_ID, which the plan
// asks `run` to set, so `cuda:i` in the training script is this GPU. The
// rank's memory and CPUs go to that GPU's NUMA node; the node's CPUs are
// shared among the ranks bound there, whole cores where the numbering
// shows them (SplitCpus, cpu_split.cc). Its NIC is the nearest
// RDMA device: same PCIe switch, else same host bridge, else same socket,
// else any; among equally near NICs the one fewest earlier ranks took, so
// two GPUs behind one switch with two NICs get one each. EFA devices count
// (they are RDMA NICs without an InfiniBand GUID).
//
// More ranks than visible GPUs is an error: NCCL refuses two ranks of one
// communicator on one GPU ("Duplicate GPU detected"), and a script using
// `cuda:LOCAL_RANK` would fail with "invalid device ordinal" anyway; it is
// better to say so before anything starts. Fewer ranks than GPUs leaves the
// last GPUs idle (noted). A host without GPUs (or with none visible) runs
// CPU ranks spread over its NUMA nodes in contiguous blocks.
#include "rankmap/bindings.h"

#include <algorithm>

#include <fmt/format.h>

namespace topolaunch {

namespace {

// Which of the layout's NICs may be chosen (by index into layout.nics).
std::vector<bool> AllowedNics(const HostLayout& layout, const std::vector<std::string>& fabric_devices) {
  std::vector<bool> rdma(layout.nics.size()), on_fabric(layout.nics.size());
  bool any_on_fabric = false;
  for (size_t i = 0; i < layout.nics.size(); ++i) {
    const Nic& nic = layout.nics[i];
    if (nic.kind != "openfabrics") continue;
    rdma[i] = true;
    on_fabric[i] = std::find(fabric_devices.begin(), fabric_devices.end(), nic.name) != fabric_devices.end();
    any_on_fabric = any_on_fabric || on_fabric[i];
  }
  return any_on_fabric ? on_fabric : rdma;
}

class NicChooser {
 public:
  NicChooser(const HostLayout& layout, std::vector<bool> allowed)
      : layout_(layout), allowed_(std::move(allowed)), uses_(layout.nics.size()) {}

  std::string ForGpu(const Gpu& gpu, std::optional<int> numa) {
    candidates_.clear();
    for (const GpuNicPath& p : layout_.gpu_nic_paths)
      if (p.gpu == gpu.pci_bus_id)
        if (int i = Index(p.nic); i >= 0 && allowed_[i]) candidates_.emplace_back(p.relation, i);
    if (candidates_.empty()) return ForNuma(numa);
    return Take();
  }

  std::string ForNuma(std::optional<int> numa) {
    candidates_.clear();
    for (size_t i = 0; i < layout_.nics.size(); ++i)
      if (allowed_[i] && numa && layout_.nics[i].numa == *numa) candidates_.emplace_back(PcieRelation::kSameSocket, i);
    return candidates_.empty() ? std::string() : Take();
  }

 private:
  int Index(const std::string& name) const {
    for (size_t i = 0; i < layout_.nics.size(); ++i)
      if (layout_.nics[i].name == name) return static_cast<int>(i);
    return -1;
  }
  // Nearest first; then the least used so far; then the name.
  std::string Take() {
    auto key = [&](const std::pair<PcieRelation, int>& c) {
      return std::tuple(c.first, uses_[c.second], std::string_view(layout_.nics[c.second].name));
    };
    auto best = std::min_element(candidates_.begin(), candidates_.end(),
                                 [&](const auto& a, const auto& b) { return key(a) < key(b); });
    ++uses_[best->second];
    return layout_.nics[best->second].name;
  }
  const HostLayout& layout_;
  std::vector<bool> allowed_;
  std::vector<int> uses_;
  std::vector<std::pair<PcieRelation, int>> candidates_;
};

// Gives each rank with a NUMA node its share of that node's CPUs.
void ShareCpus(const HostLayout& layout, std::vector<RankBinding>& ranks, std::vector<std::string>& notes,
               const std::string& host) {
  int threads = layout.cores > 0 && layout.pus % layout.cores == 0 ? layout.pus / layout.cores : 1;
  std::vector<RankBinding*> members;
  for (const NumaNode& node : layout.numa_nodes) {
    members.clear();
    for (RankBinding& r : ranks) if (r.numa == node.os_index) members.push_back(&r);
    if (members.empty() || node.cpus.empty()) continue;
    if (node.cpus.size() < members.size())
      notes.push_back(fmt::format("{}: {} ranks share the {} CPU(s) of NUMA node {}", host, members.size(),
                                  node.cpus.size(), node.os_index));
    std::vector<std::vector<int>> parts = SplitCpus(node.cpus, static_cast<int>(members.size()), threads);
    for (size_t i = 0; i < members.size(); ++i) members[i]->cpus = std::move(parts[i]);
  }
}

// The NUMA node of a GPU; a host with one NUMA node needs no answer from hwloc.
std::optional<int> GpuNuma(const HostLayout& layout, const Gpu& gpu) {
  if (gpu.numa >= 0) return gpu.numa;
  if (layout.numa_nodes.size() == 1) return layout.numa_nodes.front().os_index;
  return std::nullopt;
}

Result<std::vector<int>> VisibleGpus(const HostLayout& layout, const std::string& host, const BindingOptions& options) {
  std::vector<int> visible;
  if (!options.cuda_visible_devices) {
    for (size_t i = 0; i < layout.gpus.size(); ++i) visible.push_back(static_cast<int>(i));
    return visible;
  }
  for (int index : *options.cuda_visible_devices) {
    if (index < 0 || static_cast<size_t>(index) >= layout.gpus.size())
      return Error(ErrorCode::kBadInput, "CUDA_VISIBLE_DEVICES",
                   fmt::format("GPU index {} does not exist on {} ({} GPU(s), indexes in PCI bus order)", index, host,
                               layout.gpus.size()));
    visible.push_back(index);
  }
  return visible;
}

HostBindings CpuRanks(const HostLayout& layout, const std::string& host, const BindingOptions& options) {
  HostBindings out;
  std::vector<const NumaNode*> nodes;
  for (const NumaNode& n : layout.numa_nodes) if (!n.cpus.empty()) nodes.push_back(&n);
  NicChooser nics(layout, AllowedNics(layout, options.fabric_devices));
  for (int i = 0; i < options.nproc_per_node; ++i) {
    RankBinding r;
    r.local_rank = i;
    if (!nodes.empty()) r.numa = nodes[static_cast<size_t>(i) * nodes.size() / options.nproc_per_node]->os_index;
    r.nic = nics.ForNuma(r.numa);
    out.ranks.push_back(r);
  }
  if (nodes.empty()) out.notes.push_back(fmt::format("{}: no NUMA node with CPUs in its layout: ranks are not bound", host));
  ShareCpus(layout, out.ranks, out.notes, host);
  return out;
}

}  // namespace

Result<HostBindings> ComputeBindings(const HostLayout* layout, const std::string& host, const BindingOptions& options) {
  HostBindings out;
  if (!layout) {
    for (int i = 0; i < options.nproc_per_node; ++i) {
      RankBinding r;
      r.local_rank = i;
      out.ranks.push_back(r);
    }
    out.notes.push_back(fmt::format("{}: layout unknown (no hwloc data in the topology): ranks are not bound", host));
    return out;
  }
  Result<std::vector<int>> visible = VisibleGpus(*layout, host, options);
  if (!visible.ok()) return visible.take_error();
  if (visible->empty()) return CpuRanks(*layout, host, options);
  if (static_cast<size_t>(options.nproc_per_node) > visible->size())
    return Error(ErrorCode::kBadUsage, host,
                 fmt::format("{} ranks per node but {} GPU(s) visible: NCCL refuses two ranks on one GPU; lower "
                             "--nproc-per-node or widen --cuda-visible-devices",
                             options.nproc_per_node, visible->size()));
  if (static_cast<size_t>(options.nproc_per_node) < visible->size())
    out.notes.push_back(fmt::format("{}: {} of {} visible GPU(s) left idle", host,
                                    visible->size() - options.nproc_per_node, visible->size()));
  NicChooser nics(*layout, AllowedNics(*layout, options.fabric_devices));
  out.ranks.reserve(options.nproc_per_node);
  for (int i = 0; i < options.nproc_per_node; ++i) {
    const Gpu& gpu = layout->gpus[(*visible)[i]];
    RankBinding r;
    r.local_rank = i, r.gpu = gpu.pci_bus_id, r.cuda_index = i, r.numa = GpuNuma(*layout, gpu);
    r.nic = nics.ForGpu(gpu, r.numa);
    if (!r.numa) out.notes.push_back(fmt::format("{}: NUMA node of GPU {} unknown: local rank {} has no CPU binding", host, gpu.pci_bus_id, i));
    out.ranks.push_back(r);
  }
  ShareCpus(*layout, out.ranks, out.notes, host);
  return out;
}

}  // namespace topolaunch
