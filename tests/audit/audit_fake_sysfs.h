// A fake sysfs tree for the node checks of `audit --local`: RDMA ports,
// GPUs below root ports, NUMA nodes, laid out as the kernel does.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_paths.h"

namespace topolaunch::testing {

/// Builds a fake sysfs tree below a TempDir, as the kernel lays it out.
class FakeSysfs {
 public:
  const std::string& root() const { return dir_.path(); }
  void Write(const std::string& relative, const std::string& text) {
    std::filesystem::path p = std::filesystem::path(dir_.path()) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  void IbPort(const std::string& dev, int port, const std::string& state, const std::string& phys,
              const std::string& rate, int symbol_errors = 0) {
    std::string base = "sys/class/infiniband/" + dev + "/ports/" + std::to_string(port) + "/";
    Write(base + "state", state);
    Write(base + "phys_state", phys);
    Write(base + "link_layer", "InfiniBand");
    Write(base + "rate", rate);
    Write(base + "counters/symbol_error", std::to_string(symbol_errors));
    Write(base + "counters/port_rcv_errors", "0");
  }
  // A GPU below root port `bridge`, which supports `slot_gts`/x16.
  void Gpu(const std::string& bridge, const std::string& bus, const std::string& cur, int cur_w,
           const std::string& max, int max_w, const std::string& slot_gts) {
    std::string dev = "sys/devices/pci0000:00/" + bridge + "/" + bus + "/";
    Write("sys/devices/pci0000:00/" + bridge + "/max_link_speed", slot_gts + " GT/s PCIe");
    Write("sys/devices/pci0000:00/" + bridge + "/max_link_width", "16");
    Write(dev + "class", "0x030200");
    Write(dev + "vendor", "0x10de");
    Write(dev + "current_link_speed", cur + " GT/s PCIe");
    Write(dev + "current_link_width", std::to_string(cur_w));
    Write(dev + "max_link_speed", max + " GT/s PCIe");
    Write(dev + "max_link_width", std::to_string(max_w));
    std::filesystem::create_directories(dir_.path() + "/sys/bus/pci/devices");
    std::filesystem::create_symlink("../../../devices/pci0000:00/" + bridge + "/" + bus,
                                    dir_.path() + "/sys/bus/pci/devices/" + bus);
  }
  void Numa(int node, const std::string& cpus, unsigned long long kb) {
    std::string base = "sys/devices/system/node/node" + std::to_string(node) + "/";
    Write(base + "cpulist", cpus);
    Write(base + "meminfo", "Node " + std::to_string(node) + " MemTotal:       " + std::to_string(kb) + " kB");
  }

 private:
  TempDir dir_;
};

/// A healthy 4-rail, 4-GPU, 2-socket node.
inline void HealthyNode(FakeSysfs& fs) {
  for (int i = 0; i < 4; ++i) fs.IbPort("mlx5_" + std::to_string(i), 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)");
  fs.Gpu("0000:00:01.0", "0000:07:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Gpu("0000:00:02.0", "0000:08:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Gpu("0000:00:03.0", "0000:09:00.0", "16.0", 16, "32.0", 16, "16.0");  // Gen5 GPU in a Gen4 slot: fine
  fs.Gpu("0000:00:04.0", "0000:0a:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Numa(0, "0-15", 131072);
  fs.Numa(1, "16-31", 131072);
}

/// HealthyNode's, but its fourth GPU (0000:0a:00.0) negotiated x8 of its x16.
inline void SickNode(FakeSysfs& fs) {
  for (int i = 0; i < 4; ++i) fs.IbPort("mlx5_" + std::to_string(i), 1, "4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)");
  fs.Gpu("0000:00:01.0", "0000:07:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Gpu("0000:00:02.0", "0000:08:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Gpu("0000:00:03.0", "0000:09:00.0", "32.0", 16, "32.0", 16, "32.0");
  fs.Gpu("0000:00:04.0", "0000:0a:00.0", "32.0", 8, "32.0", 16, "32.0");
  fs.Numa(0, "0-15", 131072);
  fs.Numa(1, "16-31", 131072);
}

}  // namespace topolaunch::testing
