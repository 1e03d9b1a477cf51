// The path class NCCL gives a pair of devices, from a tree of CPUs, PCIe
// switches and devices, following NVIDIA/nccl src/graph/paths.cc
// (ncclTopoSetPaths): a path's class is the worst of its links, where a
// device-switch link is PIX, a switch-switch link PXB ("differentiate
// between one and multiple PCI switches"), a PCI link that touches a CPU PHB
// ("a path going through the CPU"), and CPU-CPU SYS. Two trees can be built:
// from a topology file as NCCL reads it (<cpu>/<pci>), and from sysfs-style
// device paths walked as NCCL walks sysfs (src/graph/xml.cc,
// ncclTopoGetXmlFromSys: "rewind two '/' and follow the upper PCI switch, or
// stop if we reach a CPU root complex").
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/nccl_xml_reader.h"

namespace topolaunch::testing {

enum class NcclPath { kLoc, kPix, kPxb, kPhb, kSys };

inline const char* NcclPathName(NcclPath p) {
  static const char* kNames[] = {"LOC", "PIX", "PXB", "PHB", "SYS"};
  return kNames[static_cast<int>(p)];
}

class NcclTree {
 public:
  enum class Kind { kCpu, kSwitch, kDevice };

  /// A node by key ("cpu:0", or a bus id), made on first use.
  int Node(const std::string& key, Kind kind) {
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    nodes_.push_back({kind, -1, key});
    return index_[key] = static_cast<int>(nodes_.size()) - 1;
  }
  void SetParent(int child, int parent) { nodes_[child].parent = parent; }
  /// The PCI ids of a switch as NCCL packs them (topo.cc,
  /// ncclTopoGetIntDevice): vendor<<48 | device<<32 | subvendor<<16 | subdevice.
  void SetPciIds(int node, uint64_t ids) { nodes_[node].ids = ids; }

  /// topo.cc, ncclTopoFlattenBcmSwitches: a Broadcom PEX Gen4/Gen5 switch
  /// shows as a switch over sub switches of the same kind; the sub switches
  /// go and their devices hang from the top one.
  void FlattenBcmSwitches() {
    auto gen = [](uint64_t id, int level) {
      if ((id & 0xfffffffffffff000ull) == 0x1000c0101000a000ull) return 4;
      if ((id & 0xfffffffffffff000ull) == (0x1000c03010000000ull | static_cast<uint64_t>(level) * 0x1000)) return 5;
      return 0;
    };
    for (size_t s = 0; s < nodes_.size(); ++s) {
      Entry& top = nodes_[s];
      int g = top.kind == Kind::kSwitch ? gen(top.ids, 0) : 0;
      if (!g) continue;
      for (size_t c = 0; c < nodes_.size(); ++c) {
        if (nodes_[c].parent != static_cast<int>(s) || nodes_[c].kind != Kind::kSwitch || gen(nodes_[c].ids, 1) != g) continue;
        for (Entry& below : nodes_)
          if (below.parent == static_cast<int>(c)) below.parent = static_cast<int>(s);
        nodes_[c].parent = kRemoved;
      }
      top.ids |= 0xffff;  // not merged again
    }
  }
  std::optional<int> Find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? std::nullopt : std::optional<int>(it->second);
  }
  /// The parent of a device or switch, by key ("" for none): for messages.
  std::string ParentKey(const std::string& key) const {
    std::optional<int> n = Find(key);
    if (!n || nodes_[*n].parent < 0) return "";
    return nodes_[nodes_[*n].parent].key;
  }

  /// The class of the path between two nodes of the tree.
  NcclPath Path(int a, int b) const {
    if (a == b) return NcclPath::kLoc;
    std::vector<int> up_a = Ancestry(a), up_b = Ancestry(b);
    if (up_a.back() != up_b.back()) return NcclPath::kSys;  // different CPUs
    // Drop the common part above the lowest common ancestor.
    while (up_a.size() > 1 && up_b.size() > 1 && up_a[up_a.size() - 2] == up_b[up_b.size() - 2]) {
      up_a.pop_back();
      up_b.pop_back();
    }
    NcclPath worst = NcclPath::kLoc;
    auto walk = [&](const std::vector<int>& up) {
      for (size_t i = 0; i + 1 < up.size(); ++i) worst = std::max(worst, Link(up[i], up[i + 1]));
    };
    walk(up_a);
    walk(up_b);
    return worst;
  }

 private:
  static constexpr int kRemoved = -2;
  struct Entry {
    Kind kind;
    int parent;
    std::string key;
    uint64_t ids = 0;
  };
  std::vector<int> Ancestry(int n) const {
    std::vector<int> up;
    for (int i = n; i >= 0 && up.size() <= nodes_.size(); i = nodes_[i].parent) up.push_back(i);
    return up;
  }
  NcclPath Link(int x, int y) const {
    if (nodes_[x].kind == Kind::kCpu || nodes_[y].kind == Kind::kCpu) return NcclPath::kPhb;
    if (nodes_[x].kind == Kind::kSwitch && nodes_[y].kind == Kind::kSwitch) return NcclPath::kPxb;
    return NcclPath::kPix;
  }
  std::vector<Entry> nodes_;
  std::map<std::string, int> index_;
};

/// The tree NCCL builds from a topology file: <cpu numaid> roots, <pci>
/// holding <gpu> or <nic> as devices, other <pci> as switches, Broadcom PEX
/// switches flattened.
inline NcclTree TreeFromTopologyXml(const XmlElement& system) {
  NcclTree tree;
  struct Walk {
    NcclTree& tree;
    void Pci(const XmlElement& pci, int parent) {
      bool device = false;
      for (const XmlElement& child : pci.children) device = device || child.name == "gpu" || child.name == "nic";
      int node = tree.Node(pci.Attribute("busid").value_or("?"), device ? NcclTree::Kind::kDevice : NcclTree::Kind::kSwitch);
      tree.SetParent(node, parent);
      uint64_t ids = 0;
      int shift = 48;
      for (const char* key : {"vendor", "device", "subsystem_vendor", "subsystem_device"}) {
        if (std::optional<std::string> v = pci.Attribute(key)) ids += std::stoull(*v, nullptr, 0) << shift;
        shift -= 16;
      }
      tree.SetPciIds(node, ids);
      if (device) return;
      for (const XmlElement& child : pci.children)
        if (child.name == "pci") Pci(child, node);
    }
  } walk{tree};
  for (const XmlElement& cpu : system.children) {
    if (cpu.name != "cpu") continue;
    int node = tree.Node("cpu:" + cpu.Attribute("numaid").value_or("?"), NcclTree::Kind::kCpu);
    for (const XmlElement& child : cpu.children)
      if (child.name == "pci") walk.Pci(child, node);
  }
  tree.FlattenBcmSwitches();
  return tree;
}

/// NCCL's checkBDFFormat: "BBBB:BB:DD.F", hex digits.
inline bool IsBdf(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

/// The tree NCCL builds from sysfs: `devices` maps a bus id to its sysfs
/// path ("/sys/devices/pci0000:00/0000:00:03.0/.../0000:05:00.0") and the
/// NUMA node sysfs reports for it. Each node's parent is found with NCCL's
/// walk; the CPU is the device's NUMA node.
/// `pci_ids` (bus id -> packed ids, as NcclTree::SetPciIds) lets Broadcom
/// switches be flattened as NCCL does.
inline NcclTree TreeFromSysfsPaths(const std::map<std::string, std::pair<std::string, int>>& devices,
                                   const std::map<std::string, uint64_t>& pci_ids = {}) {
  NcclTree tree;
  for (const auto& [bus_id, where] : devices) {
    int node = tree.Node(bus_id, NcclTree::Kind::kDevice);
    std::string current = where.first;
    // Every node of a device's walk shares its NUMA node (one host bridge).
    const int numa_id = where.second;
    for (;;) {
      std::optional<int> parent;
      std::string parent_path = current;
      bool cpu = false;
      for (int slashes = 0;;) {
        size_t slash = parent_path.rfind('/');
        if (slash == std::string::npos || slash == 0) break;
        ++slashes;
        parent_path.resize(slash);
        std::string component = parent_path.substr(parent_path.rfind('/') + 1);
        if (!IsBdf(component)) {  // a CPU root complex
          parent = tree.Node("cpu:" + std::to_string(numa_id), NcclTree::Kind::kCpu);
          cpu = true;
          break;
        }
        if (slashes == 2) {  // the upper PCI switch
          parent = tree.Node(component, NcclTree::Kind::kSwitch);
          break;
        }
      }
      if (!parent) break;
      std::string parent_id = parent_path.substr(parent_path.rfind('/') + 1);
      if (auto ids = pci_ids.find(parent_id); !cpu && ids != pci_ids.end()) tree.SetPciIds(*parent, ids->second);
      bool known = !cpu && !tree.ParentKey(parent_id).empty();
      tree.SetParent(node, *parent);
      if (cpu || known) break;
      node = *parent;
      current = parent_path;
    }
  }
  tree.FlattenBcmSwitches();
  return tree;
}

}  // namespace topolaunch::testing
