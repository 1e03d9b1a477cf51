// HostLayout <-> JSON. Reading checks every field and cross-reference (a
// GPU-NIC path must name a listed GPU and NIC), collecting all problems.
#include "core/layout_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "core/json_checker.h"

namespace topolaunch {

using nlohmann::json;

namespace {

json LinkJson(const std::optional<PcieLink>& link) { return link ? json(link->gbytes_per_s) : json(nullptr); }
json BridgeIdJson(const std::string& id) { return id.empty() ? json(nullptr) : json(id); }
// "1000:c010 1000:a000" (vendor:device subsystem vendor:device, as lspci -nv
// shows them), or null when hwloc did not say.
json PciIdsJson(const PciBridge& b) {
  if (!b.vendor_id && !b.device_id) return nullptr;
  return fmt::format("{:04x}:{:04x} {:04x}:{:04x}", b.vendor_id, b.device_id, b.subvendor_id, b.subdevice_id);
}

json GpuJson(const Gpu& g) {
  json j = {{"pci_bus_id", g.pci_bus_id},    {"vendor", g.vendor}, {"model", g.model},
            {"os_devices", g.os_devices},    {"numa", g.numa},     {"link_gbytes_per_s", LinkJson(g.link)},
            {"nvlink_peers", g.nvlink_peers}, {"pci_parent", BridgeIdJson(g.pci_parent)}};
  // Only GPUs in an NVLink fabric have one: every other layout reads and
  // writes as before.
  if (const std::optional<GpuFabric>& f = g.nvlink_fabric)
    j["nvlink_fabric"] = {{"cluster_uuid", f->cluster_uuid},
                          {"clique_id", f->clique_id},
                          {"state", f->state},
                          {"status", f->status},
                          {"health", f->health}};
  return j;
}



json NicJson(const Nic& n) {
  return {{"name", n.name},
          {"kind", n.kind},
          {"pci_bus_id", n.pci_bus_id},
          {"netdevs", n.netdevs},
          {"node_guid", n.node_guid ? json(FormatGuid(*n.node_guid)) : json(nullptr)},
          {"numa", n.numa},
          {"link_gbytes_per_s", LinkJson(n.link)},
          {"pci_parent", BridgeIdJson(n.pci_parent)}};
}

// `id` has `shape`: each 'h' a lowercase hex digit, every other character itself.
bool HasHexShape(std::string_view id, std::string_view shape) {
  if (id.size() != shape.size()) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    bool hex = std::isdigit(static_cast<unsigned char>(id[i])) || (id[i] >= 'a' && id[i] <= 'f');
    if (shape[i] == 'h' ? !hex : id[i] != shape[i]) return false;
  }
  return true;
}

// "0000:07:00.0": 4 hex digits domain, lowercase, as hwloc prints it.
bool IsPciBusId(std::string_view id) { return HasHexShape(id, "hhhh:hh:hh.h"); }

// Reads the layout with one JsonChecker; `c` collects the problems.
class LayoutReader {
 public:
  explicit LayoutReader(JsonChecker& c) : c_(c) {}

  HostLayout Read(const json& j, const std::string& p) {
    HostLayout l;
    l.hostname = c_.String(j, p, "hostname").value_or("");
    l.source = c_.String(j, p, "source").value_or("");
    l.architecture = c_.String(j, p, "architecture").value_or("");
    l.packages = static_cast<int>(c_.Integer(j, p, "packages", 0, kMaxCount).value_or(0));
    l.cores = static_cast<int>(c_.Integer(j, p, "cores", 0, kMaxCount).value_or(0));
    l.pus = static_cast<int>(c_.Integer(j, p, "pus", 0, kMaxCount).value_or(0));
    ForEach(j, p, "numa_nodes", [&](const json& o, const std::string& q) { l.numa_nodes.push_back(ReadNuma(o, q)); });
    ForEach(j, p, "gpus", [&](const json& o, const std::string& q) { l.gpus.push_back(ReadGpu(o, q)); });
    ForEach(j, p, "nics", [&](const json& o, const std::string& q) { l.nics.push_back(ReadNic(o, q)); });
    ForEach(j, p, "gpu_nic_paths",
            [&](const json& o, const std::string& q) { l.gpu_nic_paths.push_back(Path(l, o, q)); });
    // pci_bridges and pci_parent came later: a layout without them is read
    // as one whose PCI tree is unknown.
    if (c_.Member(j, p, "pci_bridges", false))
      ForEach(j, p, "pci_bridges", [&](const json& o, const std::string& q) { l.pci_bridges.push_back(ReadBridge(o, q)); });
    CheckPciTree(l, p);
    if (const json* nvml = c_.Object(j, p, "nvml", false)) {
      std::string q = JsonPath(p, "nvml");
      l.nvml =
          NvmlFacts{c_.String(*nvml, q, "status").value_or(""), c_.String(*nvml, q, "driver_version").value_or("")};
    }
    return l;
  }

 private:
  static constexpr long long kMaxCount = 1 << 24;
  static constexpr size_t kMaxBridges = 4096;

  // An optional bus id of a bridge: a string like "0000:03:00.0", or null.
  std::string BridgeId(const json& j, const std::string& p, std::string_view key) {
    const json* v = c_.Member(j, p, key, false);
    if (!v || v->is_null()) return "";
    std::string id = c_.String(j, p, key).value_or("");
    if (!IsPciBusId(id))
      c_.Report(JsonPath(p, key), fmt::format("expected a PCI bus id like \"0000:03:00.0\" or null, found \"{}\"", id));
    return id;
  }

  PciBridge ReadBridge(const json& j, const std::string& p) {
    PciBridge b;
    b.pci_bus_id = BusId(j, p, false);
    b.parent = BridgeId(j, p, "parent");
    b.link = Link(j, p);
    const json* ids = c_.Member(j, p, "pci_ids", false);
    if (ids && !ids->is_null()) {
      std::string text = c_.String(j, p, "pci_ids").value_or("");
      unsigned v[4];
      char end;
      if (text.size() != 19 || std::sscanf(text.c_str(), "%4x:%4x %4x:%4x%c", &v[0], &v[1], &v[2], &v[3], &end) != 4)
        c_.Report(JsonPath(p, "pci_ids"), fmt::format("expected \"vendor:device subvendor:subdevice\" in hex like "
                                                      "\"1000:c010 1000:a000\", or null; found \"{}\"", text));
      else
        b.vendor_id = v[0], b.device_id = v[1], b.subvendor_id = v[2], b.subdevice_id = v[3];
    }
    return b;
  }

  // Every parent is a listed bridge, each bridge is listed once, and no
  // bridge is its own ancestor. Linear in the bridges: a hostile layout
  // cannot make this slow.
  void CheckPciTree(const HostLayout& l, const std::string& p) {
    std::string bridges = JsonPath(p, "pci_bridges");
    if (l.pci_bridges.size() > kMaxBridges)
      c_.Report(bridges, fmt::format("{} bridges; a machine has a few hundred at most ({} allowed)", l.pci_bridges.size(), kMaxBridges));
    std::unordered_map<std::string_view, size_t> index;
    for (size_t i = 0; i < l.pci_bridges.size(); ++i)
      if (!index.emplace(l.pci_bridges[i].pci_bus_id, i).second)
        c_.Report(JsonPath(JsonIndex(bridges, i), "pci_bus_id"), fmt::format("\"{}\" is listed twice", l.pci_bridges[i].pci_bus_id));
    auto check_parent = [&](const std::string& parent, const std::string& where) {
      if (!parent.empty() && !index.count(parent))
        c_.Report(JsonPath(where, "pci_parent"), fmt::format("\"{}\" is not in pci_bridges[].pci_bus_id", parent));
    };
    for (size_t i = 0; i < l.gpus.size(); ++i) check_parent(l.gpus[i].pci_parent, JsonIndex(JsonPath(p, "gpus"), i));
    for (size_t i = 0; i < l.nics.size(); ++i) check_parent(l.nics[i].pci_parent, JsonIndex(JsonPath(p, "nics"), i));
    // 0: not seen, 1: on the walk being made, 2: reaches the top.
    std::vector<int> state(l.pci_bridges.size(), 0);
    for (size_t start = 0; start < l.pci_bridges.size(); ++start) {
      std::vector<size_t> walk;
      size_t at = start;
      for (;;) {
        if (state[at] == 2) break;
        if (state[at] == 1) {
          c_.Report(JsonPath(JsonIndex(bridges, at), "parent"),
                    fmt::format("\"{}\" is its own ancestor: the parents go round in a loop", l.pci_bridges[at].pci_bus_id));
          break;
        }
        state[at] = 1;
        walk.push_back(at);
        const std::string& parent = l.pci_bridges[at].parent;
        if (parent.empty()) break;
        auto up = index.find(parent);
        if (up == index.end()) {
          c_.Report(JsonPath(JsonIndex(bridges, at), "parent"), fmt::format("\"{}\" is not in pci_bridges[].pci_bus_id", parent));
          break;
        }
        at = up->second;
      }
      for (size_t i : walk) state[i] = 2;  // reported once, then as good as done
    }
  }

  template <typename Fn>
  void ForEach(const json& j, const std::string& p, std::string_view key, Fn fn) {
    const json* array = c_.Array(j, p, key);
    if (!array) return;
    for (size_t i = 0; i < array->size(); ++i) {
      std::string q = JsonIndex(JsonPath(p, key), i);
      if ((*array)[i].is_object())
        fn((*array)[i], q);
      else
        c_.Report(q, "expected an object");
    }
  }

  int NumaIndex(const json& j, const std::string& p, std::string_view key) {
    return static_cast<int>(c_.Integer(j, p, key, -1, kMaxCount).value_or(-1));
  }

  std::string BusId(const json& j, const std::string& p, bool allow_empty) {
    std::string id = c_.String(j, p, "pci_bus_id").value_or("");
    if (!IsPciBusId(id) && !(allow_empty && id.empty()))
      c_.Report(JsonPath(p, "pci_bus_id"),
                fmt::format("expected a PCI bus id like \"0000:07:00.0\", found \"{}\"", id));
    return id;
  }

  std::optional<PcieLink> Link(const json& j, const std::string& p) {
    const json* v = c_.Member(j, p, "link_gbytes_per_s", false);
    if (!v || v->is_null()) return std::nullopt;
    std::optional<double> gbs = c_.Number(j, p, "link_gbytes_per_s");
    if (gbs && *gbs <= 0) c_.Report(JsonPath(p, "link_gbytes_per_s"), "expected a positive number or null");
    return gbs && *gbs > 0 ? std::optional<PcieLink>(PcieLink{*gbs}) : std::nullopt;
  }

  NumaNode ReadNuma(const json& j, const std::string& p) {
    NumaNode n;
    n.os_index = static_cast<int>(c_.Integer(j, p, "os_index", 0, kMaxCount).value_or(0));
    n.package = NumaIndex(j, p, "package");
    if (std::optional<std::string> cpus = c_.String(j, p, "cpus")) {
      Result<std::vector<int>> parsed = ParseCpuList(*cpus, JsonPath(p, "cpus"));
      if (parsed.ok())
        n.cpus = std::move(parsed).value();
      else
        c_.Report(JsonPath(p, "cpus"), parsed.error().problems[0].what);
    }
    n.memory_bytes = static_cast<unsigned long long>(
        c_.Integer(j, p, "memory_bytes", 0, std::numeric_limits<long long>::max()).value_or(0));
    return n;
  }

  Gpu ReadGpu(const json& j, const std::string& p) {
    Gpu g;
    g.pci_bus_id = BusId(j, p, false);
    g.vendor = c_.String(j, p, "vendor").value_or("");
    if (g.vendor != "nvidia" && g.vendor != "amd")
      c_.Report(JsonPath(p, "vendor"), fmt::format("expected \"nvidia\" or \"amd\", found \"{}\"", g.vendor));
    g.model = c_.String(j, p, "model").value_or("");
    g.os_devices = c_.StringArray(j, p, "os_devices");
    g.numa = NumaIndex(j, p, "numa");
    g.link = Link(j, p);
    g.nvlink_peers = c_.StringArray(j, p, "nvlink_peers");
    for (size_t i = 0; i < g.nvlink_peers.size(); ++i)
      if (!IsPciBusId(g.nvlink_peers[i]))
        c_.Report(JsonIndex(JsonPath(p, "nvlink_peers"), i), "expected a PCI bus id like \"0000:07:00.0\"");
    g.pci_parent = BridgeId(j, p, "pci_parent");
    const json* fabric = c_.Member(j, p, "nvlink_fabric", false);
    if (fabric && !fabric->is_null())
      if (const json* f = c_.Object(j, p, "nvlink_fabric")) g.nvlink_fabric = ReadGpuFabric(*f, JsonPath(p, "nvlink_fabric"));
    return g;
  }

  GpuFabric ReadGpuFabric(const json& j, const std::string& p) {
    GpuFabric f;
    f.cluster_uuid = c_.String(j, p, "cluster_uuid").value_or("");
    if (!HasHexShape(f.cluster_uuid, "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh"))
      c_.Report(JsonPath(p, "cluster_uuid"),
                fmt::format("expected a UUID like \"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\" (lowercase), found \"{}\"",
                            f.cluster_uuid));
    f.clique_id = static_cast<unsigned>(c_.Integer(j, p, "clique_id", 0, 0xffffffffLL).value_or(0));
    f.state = c_.String(j, p, "state").value_or("");
    if (std::find(std::begin(kGpuFabricStates), std::end(kGpuFabricStates), f.state) == std::end(kGpuFabricStates))
      c_.Report(JsonPath(p, "state"),
                fmt::format("expected \"not_started\", \"in_progress\" or \"completed\", found \"{}\"", f.state));
    f.status = c_.String(j, p, "status").value_or("");
    if (f.status.empty()) c_.Report(JsonPath(p, "status"), "expected \"ok\" or NVML's reason the registration failed");
    f.health = c_.StringArray(j, p, "health", false);
    for (size_t i = 0; i < f.health.size(); ++i)
      if (std::find(std::begin(kGpuFabricHealthIssues), std::end(kGpuFabricHealthIssues), f.health[i]) ==
          std::end(kGpuFabricHealthIssues))
        c_.Report(JsonIndex(JsonPath(p, "health"), i),
                  fmt::format("expected one of degraded_bandwidth, route_recovery, route_unhealthy, "
                              "access_timeout_recovery, incorrect_configuration; found \"{}\"", f.health[i]));
    return f;
  }

  Nic ReadNic(const json& j, const std::string& p) {
    Nic n;
    n.name = c_.String(j, p, "name").value_or("");
    if (n.name.empty()) c_.Report(JsonPath(p, "name"), "expected a device name like \"mlx5_0\"");
    n.kind = c_.String(j, p, "kind").value_or("");
    if (n.kind != "openfabrics" && n.kind != "network")
      c_.Report(JsonPath(p, "kind"), fmt::format("expected \"openfabrics\" or \"network\", found \"{}\"", n.kind));
    n.pci_bus_id = BusId(j, p, true);
    n.netdevs = c_.StringArray(j, p, "netdevs");
    const json* guid = c_.Member(j, p, "node_guid", false);
    if (guid && !guid->is_null()) n.node_guid = c_.GuidString(j, p, "node_guid");
    n.numa = NumaIndex(j, p, "numa");
    n.link = Link(j, p);
    n.pci_parent = BridgeId(j, p, "pci_parent");
    return n;
  }

  GpuNicPath Path(const HostLayout& l, const json& j, const std::string& p) {
    GpuNicPath path;
    path.gpu = c_.String(j, p, "gpu").value_or("");
    path.nic = c_.String(j, p, "nic").value_or("");
    if (std::optional<std::string> name = c_.String(j, p, "relation")) {
      if (std::optional<PcieRelation> r = ParsePcieRelation(*name))
        path.relation = *r;
      else
        c_.Report(JsonPath(p, "relation"),
                  fmt::format("expected one of same_pcie_switch, same_host_bridge, same_socket, across_sockets, "
                              "unknown; found \"{}\"",
                              *name));
    }
    bool gpu_known = false, nic_known = false;
    for (const Gpu& g : l.gpus) gpu_known = gpu_known || g.pci_bus_id == path.gpu;
    for (const Nic& n : l.nics) nic_known = nic_known || n.name == path.nic;
    if (!gpu_known) c_.Report(JsonPath(p, "gpu"), fmt::format("\"{}\" is not in gpus[].pci_bus_id", path.gpu));
    if (!nic_known) c_.Report(JsonPath(p, "nic"), fmt::format("\"{}\" is not in nics[].name", path.nic));
    return path;
  }

  JsonChecker& c_;
};

}  // namespace

json LayoutToJson(const HostLayout& layout) {
  json numa = json::array(), gpus = json::array(), nics = json::array(), paths = json::array(), bridges = json::array();
  for (const NumaNode& n : layout.numa_nodes)
    numa.push_back({{"os_index", n.os_index},
                    {"package", n.package},
                    {"cpus", FormatCpuList(n.cpus)},
                    {"memory_bytes", n.memory_bytes}});
  for (const Gpu& g : layout.gpus) gpus.push_back(GpuJson(g));
  for (const Nic& n : layout.nics) nics.push_back(NicJson(n));
  for (const GpuNicPath& p : layout.gpu_nic_paths)
    paths.push_back({{"gpu", p.gpu}, {"nic", p.nic}, {"relation", PcieRelationName(p.relation)}});
  for (const PciBridge& b : layout.pci_bridges)
    bridges.push_back({{"pci_bus_id", b.pci_bus_id},
                       {"parent", BridgeIdJson(b.parent)},
                       {"link_gbytes_per_s", LinkJson(b.link)},
                       {"pci_ids", PciIdsJson(b)}});
  json j = {{"hostname", layout.hostname},
            {"source", layout.source},
            {"architecture", layout.architecture},
            {"packages", layout.packages},
            {"cores", layout.cores},
            {"pus", layout.pus},
            {"numa_nodes", numa},
            {"gpus", gpus},
            {"nics", nics},
            {"gpu_nic_paths", paths},
            {"pci_bridges", bridges}};
  if (layout.nvml) j["nvml"] = {{"status", layout.nvml->status}, {"driver_version", layout.nvml->driver_version}};
  return j;
}

Result<HostLayout> LayoutFromJson(const json& json_value, const std::string& json_path) {
  JsonChecker c("");  // no file name: callers add their own
  if (!json_value.is_object()) c.Report(json_path, "expected an object");
  HostLayout layout = LayoutReader(c).Read(json_value, json_path);
  if (c.ok()) return layout;
  return c.TakeError();
}

}  // namespace topolaunch
