// The NCCL topology file against the machines it describes: for every real
// machine's hwloc XML in the test data, every GPU x GPU and GPU x NIC pair
// gets the same NCCL path class (LOC/PIX/PXB/PHB/SYS) from the file
// topolaunch writes as from the machine's own PCI tree walked the way NCCL
// walks sysfs. hwloc is read here directly, not through topolaunch, so the
// two sides share nothing but the XML file.
#include <hwloc.h>

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "discover/hwloc_layout_source.h"
#include "env/nccl_paths.h"
#include "env/nccl_topo_xml.h"
#include "env/nccl_xml_reader.h"
#include "support/test_paths.h"

namespace topolaunch {
namespace {

namespace fs = std::filesystem;
using testing::NcclPath;
using testing::NcclTree;

std::string BusId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, func);
}

// The machine as sysfs shows it: each wanted device's path under
// /sys/devices and its NUMA node, from hwloc's own tree.
class HwlocMachine {
 public:
  explicit HwlocMachine(const std::string& file) {
    hwloc_topology_init(&t_);
    hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_ALL);
    ok_ = hwloc_topology_set_xml(t_, file.c_str()) == 0 && hwloc_topology_load(t_) == 0;
  }
  ~HwlocMachine() { hwloc_topology_destroy(t_); }
  HwlocMachine(const HwlocMachine&) = delete;
  HwlocMachine& operator=(const HwlocMachine&) = delete;
  bool ok() const { return ok_; }

  /// "/sys/devices/pci0000:00/0000:00:03.0/.../BUSID" and the NUMA node of
  /// a GPU by its bus id, or of a NIC by its OpenFabrics device name (a bus
  /// id alone is not enough: one of the machines has two 0000:04:00.0 in
  /// different host bridges); nullopt when hwloc has no such device.
  std::optional<std::pair<std::string, int>> GpuPath(const std::string& bus_id) {
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_pcidev(t_, o));) {
      const auto& a = o->attr->pcidev;
      if (a.vendor_id == 0x10de && BusId(a.domain, a.bus, a.dev, a.func) == bus_id) return SysfsPath(o);
    }
    return std::nullopt;
  }
  std::optional<std::pair<std::string, int>> NicPath(const std::string& name) {
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(t_, o));)
      if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && name == o->name && o->parent &&
          o->parent->type == HWLOC_OBJ_PCI_DEVICE)
        return SysfsPath(o->parent);
    return std::nullopt;
  }

  /// The PCI ids of every bridge on the paths asked so far, packed as NCCL
  /// packs them.
  const std::map<std::string, uint64_t>& pci_ids() const { return ids_; }

 private:
  std::pair<std::string, int> SysfsPath(hwloc_obj_t o) {
    const auto& a = o->attr->pcidev;
    std::vector<std::string> parts = {BusId(a.domain, a.bus, a.dev, a.func)};
    for (hwloc_obj_t b = o->parent; b && b->type == HWLOC_OBJ_BRIDGE; b = b->parent) {
      if (b->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
        const auto& down = b->attr->bridge.downstream.pci;
        parts.push_back(fmt::format("pci{:04x}:{:02x}", down.domain, down.secondary_bus));
        break;
      }
      const auto& up = b->attr->bridge.upstream.pci;
      parts.push_back(BusId(up.domain, up.bus, up.dev, up.func));
      ids_[parts.back()] = static_cast<uint64_t>(up.vendor_id) << 48 | static_cast<uint64_t>(up.device_id) << 32 |
                           static_cast<uint64_t>(up.subvendor_id) << 16 | up.subdevice_id;
    }
    std::string path = "/sys/devices";
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) path += "/" + *it;
    hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(t_, o);
    int numa = cpu_side->nodeset && hwloc_bitmap_weight(cpu_side->nodeset) == 1 ? hwloc_bitmap_first(cpu_side->nodeset) : -1;
    return {path, numa};
  }

  hwloc_topology_t t_ = nullptr;
  bool ok_ = false;
  std::map<std::string, uint64_t> ids_;
};

struct Endpoints {
  std::vector<std::string> gpus;  // PCI bus ids
  std::vector<std::pair<std::string, std::string>> nics;  // PCI bus id, device name
};

Endpoints EndpointsOf(const testing::XmlElement& system) {
  Endpoints e;
  std::vector<const testing::XmlElement*> pcis;
  system.Collect("pci", pcis);
  for (const testing::XmlElement* pci : pcis)
    for (const testing::XmlElement& child : pci->children) {
      if (child.name == "gpu") e.gpus.push_back(*pci->Attribute("busid"));
      if (child.name == "nic" && !child.children.empty())
        e.nics.push_back({*pci->Attribute("busid"), child.children[0].Attribute("name").value_or("")});
    }
  return e;
}

std::vector<fs::path> RealMachines() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(testing::TestDataDir() + "/hwloc"))
    if (entry.path().extension() == ".xml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(NcclTopoPaths, EveryRealMachineKeepsItsPathClassesInTheFile) {
  std::vector<fs::path> machines = RealMachines();
  ASSERT_GE(machines.size(), 10u) << "the real machines' XML is part of the test data";
  int pairs = 0;
  std::map<std::string, int> seen;  // class name -> pairs, over all machines
  // Each machine twice: with every RDMA NIC as a compute port, and with
  // none (a TCP job, or NICs not cabled into the fabric): a GPU pair's
  // switch must not depend on a NIC sharing it.
  for (const fs::path& file : machines) for (bool with_nics : {true, false}) {
    SCOPED_TRACE(file.filename().string() + (with_nics ? " with its NICs" : " without NICs"));
    Result<HostLayout> layout = HwlocLayoutSource::FromXmlFile(file.string()).LoadLayout();
    ASSERT_TRUE(layout.ok()) << layout.error().Message();
    std::vector<ComputePort> ports;
    for (const Nic& nic : layout->nics)
      if (with_nics && nic.kind == "openfabrics") ports.push_back({nic.name, 1, nic.node_guid, std::nullopt, nic.pci_bus_id});
    Result<std::string> xml = FormatNcclTopoXml(*layout, ports, FabricKind::kInfiniband);
    ASSERT_TRUE(xml.ok()) << xml.error().Message();
    testing::NcclXmlReader reader;
    std::optional<testing::XmlElement> root = reader.Parse(*xml);
    ASSERT_TRUE(root) << reader.error() << "\n" << *xml;
    EXPECT_EQ(xml->find(" dev="), std::string::npos) << "NCCL numbers the GPUs it sees itself";
    NcclTree from_file = testing::TreeFromTopologyXml(*root);

    HwlocMachine machine(file.string());
    ASSERT_TRUE(machine.ok());
    Endpoints ends = EndpointsOf(*root);
    std::map<std::string, std::pair<std::string, int>> sysfs;
    for (const std::string& bus_id : ends.gpus) {
      std::optional<std::pair<std::string, int>> where = machine.GpuPath(bus_id);
      ASSERT_TRUE(where) << bus_id << " is in the file but not in the machine";
      sysfs[bus_id] = *where;
    }
    for (const auto& [bus_id, name] : ends.nics) {
      std::optional<std::pair<std::string, int>> where = machine.NicPath(name);
      ASSERT_TRUE(where) << name << " is in the file but not in the machine";
      sysfs[bus_id] = *where;
    }
    NcclTree from_machine = testing::TreeFromSysfsPaths(sysfs, machine.pci_ids());

    auto compare = [&](const std::string& a, const std::string& b) {
      NcclPath file_class = from_file.Path(*from_file.Find(a), *from_file.Find(b));
      NcclPath machine_class = from_machine.Path(*from_machine.Find(a), *from_machine.Find(b));
      ++pairs;
      ++seen[testing::NcclPathName(machine_class)];
      EXPECT_EQ(testing::NcclPathName(file_class), std::string(testing::NcclPathName(machine_class)))
          << a << " x " << b << ": the file puts them under " << from_file.ParentKey(a) << " / " << from_file.ParentKey(b)
          << ", the machine under " << from_machine.ParentKey(a) << " / " << from_machine.ParentKey(b) << "\n"
          << *xml;
    };
    for (size_t i = 0; i < ends.gpus.size(); ++i) {
      for (size_t j = i + 1; j < ends.gpus.size(); ++j) compare(ends.gpus[i], ends.gpus[j]);
      for (const auto& nic : ends.nics) compare(ends.gpus[i], nic.first);
    }
  }
  // The data has switches to get right: GPUs and NICs behind one PLX
  // switch (PIX), on one CPU (PHB), on two (SYS). No machine here has two
  // switch levels (PXB): nccl_topo_xml_test has a made-up one.
  for (const char* klass : {"PIX", "PHB", "SYS"}) EXPECT_GT(seen[klass], 0) << klass;
  for (const auto& [klass, count] : seen) RecordProperty(klass, count);
  RecordProperty("machines", static_cast<int>(machines.size()));
  EXPECT_GT(pairs, 150);
}

}  // namespace
}  // namespace topolaunch
