// sysfs, as the kernel lays it out:
//   class/infiniband/mlx5_0/ports/1/{state "4: ACTIVE", phys_state "5: LinkUp",
//     link_layer, rate "200 Gb/sec (4X HDR)", counters/symbol_error ...}
//   bus/pci/devices/0000:07:00.0 -> ../../../devices/pci0000:00/0000:00:01.0/0000:07:00.0
//     {class "0x030200", vendor "0x10de", current_link_speed "16.0 GT/s PCIe",
//      current_link_width "16", max_link_speed, max_link_width}; the directory
//     above the device is its upstream port, whose max_link_* bound the link.
//   devices/system/node/node0/{cpulist, meminfo "Node 0 MemTotal: 131072 kB"}
#include "audit/audit_sysfs_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "discover/nvml_probe.h"

namespace topolaunch {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadLine(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string AfterColon(const std::string& text) {
  size_t colon = text.find(": ");
  return colon == std::string::npos ? text : text.substr(colon + 2);
}

std::string PortStateName(const std::string& raw) {
  std::string s = AfterColon(raw);
  if (s == "ACTIVE" || s == "ACTIVE_DEFER") return "Active";
  if (s == "INIT") return "Init";
  if (s == "ARMED") return "Armed";
  if (s == "DOWN") return "Down";
  return s;
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

LocalIbPort ReadIbPort(const std::string& device, const fs::path& dir) {
  LocalIbPort p;
  p.device = device;
  p.port = std::atoi(dir.filename().c_str());
  p.state = PortStateName(ReadLine(dir / "state").value_or(""));
  p.phys_state = AfterColon(ReadLine(dir / "phys_state").value_or(""));
  p.link_layer = ReadLine(dir / "link_layer").value_or("");
  std::string rate = ReadLine(dir / "rate").value_or("");
  p.rate_gbps = std::atof(rate.c_str());
  size_t open = rate.find('('), close = rate.find(')');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    std::istringstream words(rate.substr(open + 1, close - open - 1));
    words >> p.width >> p.speed;
  }
  for (const CounterInfo& c : ErrorCounters())
    if (std::optional<std::string> v = ReadLine(dir / "counters" / std::string(c.sysfs_name)))
      p.counters[std::string(c.name)] = std::strtoull(v->c_str(), nullptr, 10);
  return p;
}

void ReadIbPorts(const fs::path& root, NodeFacts& facts) {
  for (const fs::path& dev : SortedEntries(root / "sys/class/infiniband")) {
    std::error_code ec;
    fs::path ports = dev / "ports";
    if (!fs::exists(ports, ec)) continue;
    std::vector<fs::path> entries = SortedEntries(ports);
    if (entries.empty()) facts.unreadable.push_back({"port_state", fmt::format("{}: cannot list its ports", ports.string())});
    for (const fs::path& port : entries) {
      facts.ib_ports.push_back(ReadIbPort(dev.filename().string(), port));
      if (facts.ib_ports.back().state.empty())
        facts.unreadable.push_back({"port_state", fmt::format("{}: cannot read the state", (port / "state").string())});
    }
  }
}

double Gts(const std::optional<std::string>& text) { return text ? std::atof(text->c_str()) : 0; }
int Lanes(const std::optional<std::string>& text) { return text ? std::atoi(text->c_str()) : 0; }

void ReadGpus(const fs::path& root, NodeFacts& facts) {
  for (const fs::path& dev : SortedEntries(root / "sys/bus/pci/devices")) {
    std::string cls = ReadLine(dev / "class").value_or("");
    std::string vendor = ReadLine(dev / "vendor").value_or("");
    bool display = cls.rfind("0x0302", 0) == 0 || cls.rfind("0x0300", 0) == 0 || cls.rfind("0x0380", 0) == 0;
    std::string name = vendor == "0x10de" ? "nvidia" : vendor == "0x1002" ? "amd" : "";
    if (!display || name.empty()) continue;
    LocalPciLink g;
    g.bus_id = dev.filename().string();
    g.vendor = name;
    g.current_gts = Gts(ReadLine(dev / "current_link_speed"));
    g.max_gts = Gts(ReadLine(dev / "max_link_speed"));
    g.current_width = Lanes(ReadLine(dev / "current_link_width"));
    g.max_width = Lanes(ReadLine(dev / "max_link_width"));
    std::error_code ec;
    fs::path real = fs::weakly_canonical(dev, ec);
    if (!ec) {
      g.slot_max_gts = Gts(ReadLine(real.parent_path() / "max_link_speed"));
      g.slot_max_width = Lanes(ReadLine(real.parent_path() / "max_link_width"));
    }
    facts.gpus.push_back(std::move(g));
  }
}

void ReadNuma(const fs::path& root, NodeFacts& facts) {
  for (const fs::path& dir : SortedEntries(root / "sys/devices/system/node")) {
    std::string name = dir.filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 || !std::isdigit(static_cast<unsigned char>(name[4]))) continue;
    LocalNuma n;
    n.node = std::atoi(name.c_str() + 4);
    n.has_cpus = !ReadLine(dir / "cpulist").value_or("").empty();
    std::ifstream in(dir / "meminfo");
    std::string line;
    while (std::getline(in, line)) {
      size_t at = line.find("MemTotal:");
      if (at != std::string::npos) n.memory_bytes = std::strtoull(line.c_str() + at + 9, nullptr, 10) * 1024ULL;
    }
    facts.numa.push_back(n);
  }
}

}  // namespace

NodeFacts ReadNodeFacts(const std::string& root, const std::string& host) {
  NodeFacts facts;
  facts.host = host;
  fs::path base = root.empty() ? fs::path("/") : fs::path(root);
  ReadIbPorts(base, facts);
  ReadGpus(base, facts);
  ReadNuma(base, facts);
  if (base == fs::path("/")) {
    std::vector<std::string> nvidia;
    for (const LocalPciLink& g : facts.gpus)
      if (g.vendor == "nvidia") nvidia.push_back(g.bus_id);
    facts.nvml_gpus = NvmlGpuLayout(nvidia);
  }
  return facts;
}

}  // namespace topolaunch
