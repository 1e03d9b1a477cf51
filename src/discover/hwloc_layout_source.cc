// The only file that includes <hwloc.h>.
//
// Live and XML topologies are loaded with the same flags (whole system, I/O
// filter KEEP_IMPORTANT), so a machine and its exported XML hold the same
// objects; both are then copied into a RawHostTopology by one walker and
// classified by ConvertRawTopology() (hwloc_layout_convert.cc). That shared
// path is what the live-versus-XML contract test relies on.
#include "discover/hwloc_layout_source.h"

#include <fmt/format.h>
#include <hwloc.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unordered_map>

#include "core/call_by_deadline.h"
#include "core/json_text.h"
#include "core/layout_json.h"
#include "discover/contained_call.h"
#include "discover/hwloc_layout_convert.h"
#include "discover/nvml_probe.h"

namespace topolaunch {

namespace {

// Owns one hwloc topology.
class HwlocTopology {
 public:
  HwlocTopology() {
    hwloc_topology_init(&t_);
    // Whole system: a Slurm cgroup must not change what the node looks like.
    hwloc_topology_set_flags(t_, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    // GPUs, NICs, storage and the bridges above them; not every USB hub.
    hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  }
  ~HwlocTopology() { hwloc_topology_destroy(t_); }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
};

std::string Info(hwloc_obj_t obj, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v ? v : "";
}

// The package above `obj` (a non-I/O object): its ancestor, or the only
// package there is when `obj` hangs from the machine itself.
int PackageOf(hwloc_topology_t t, hwloc_obj_t obj) {
  for (hwloc_obj_t o = obj; o; o = o->parent)
    if (o->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(o->logical_index);
  int packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  if (packages == 1) return 0;
  if (obj->cpuset && !hwloc_bitmap_iszero(obj->cpuset))
    for (int i = 0; i < packages; ++i) {
      hwloc_obj_t p = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, i);
      if (hwloc_bitmap_isincluded(obj->cpuset, p->cpuset)) return i;
    }
  return -1;
}

// The NUMA node an I/O object is local to, or -1 when its CPU-side
// ancestor spans several (or none).
int NumaOf(hwloc_obj_t non_io) {
  if (!non_io->nodeset || hwloc_bitmap_weight(non_io->nodeset) != 1) return -1;
  return hwloc_bitmap_first(non_io->nodeset);
}

std::vector<NumaNode> ReadNumaNodes(hwloc_topology_t t) {
  std::vector<NumaNode> nodes;
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));) {
    NumaNode node;
    node.os_index = static_cast<int>(n->os_index);
    node.package = PackageOf(t, n);
    node.memory_bytes = n->attr->numanode.local_memory;
    unsigned cpu;
    hwloc_bitmap_foreach_begin(cpu, n->cpuset) node.cpus.push_back(static_cast<int>(cpu));
    hwloc_bitmap_foreach_end();
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.os_index < b.os_index; });
  return nodes;
}

// XML keeps six decimals of hwloc's float; rounding to MB/s makes the live
// value and its exported twin compare equal.
double RoundedLink(float linkspeed) { return linkspeed > 0 ? std::round(linkspeed * 1000.0) / 1000.0 : 0; }

RawPciFunction ReadPci(hwloc_topology_t t, hwloc_obj_t obj) {
  const hwloc_obj_attr_u::hwloc_pcidev_attr_s& a = obj->attr->pcidev;
  RawPciFunction p;
  p.domain = a.domain, p.bus = a.bus, p.dev = a.dev, p.func = a.func;
  p.class_id = a.class_id, p.vendor_id = a.vendor_id, p.device_id = a.device_id;
  p.device_name = Info(obj, "PCIDevice");
  p.link_gbytes_per_s = RoundedLink(a.linkspeed);
  for (hwloc_obj_t b = obj->parent; b && b->type == HWLOC_OBJ_BRIDGE; b = b->parent) {
    RawBridge bridge{b->gp_index, b->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST, "", 0};
    if (!bridge.host) {
      const hwloc_obj_attr_u::hwloc_pcidev_attr_s& up = b->attr->bridge.upstream.pci;
      bridge.pci_bus_id = FormatPciBusId(up.domain, up.bus, up.dev, up.func);
      bridge.link_gbytes_per_s = RoundedLink(up.linkspeed);
      bridge.vendor_id = up.vendor_id, bridge.device_id = up.device_id;
      bridge.subvendor_id = up.subvendor_id, bridge.subdevice_id = up.subdevice_id;
    }
    p.bridges.insert(p.bridges.begin(), std::move(bridge));
  }
  hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(t, obj);
  p.numa = NumaOf(cpu_side);
  p.package = PackageOf(t, cpu_side);
  return p;
}

RawOsDeviceType OsDeviceType(hwloc_obj_osdev_type_t type) {
  switch (type) {
    case HWLOC_OBJ_OSDEV_BLOCK:
      return RawOsDeviceType::kBlock;
    case HWLOC_OBJ_OSDEV_GPU:
      return RawOsDeviceType::kGpu;
    case HWLOC_OBJ_OSDEV_NETWORK:
      return RawOsDeviceType::kNetwork;
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
      return RawOsDeviceType::kOpenFabrics;
    case HWLOC_OBJ_OSDEV_DMA:
      return RawOsDeviceType::kDma;
    case HWLOC_OBJ_OSDEV_COPROC:
      return RawOsDeviceType::kCoProc;
  }
  return RawOsDeviceType::kOther;
}

RawHostTopology ReadTopology(hwloc_topology_t t) {
  RawHostTopology raw;
  hwloc_obj_t root = hwloc_get_root_obj(t);
  raw.hostname = Info(root, "HostName");
  raw.architecture = Info(root, "Architecture");
  raw.packages = std::max(0, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE));
  raw.cores = std::max(0, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
  raw.pus = std::max(0, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
  raw.numa_nodes = ReadNumaNodes(t);
  std::unordered_map<hwloc_obj_t, int> pci_index;
  for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_pcidev(t, obj));) {
    pci_index[obj] = static_cast<int>(raw.pci.size());
    raw.pci.push_back(ReadPci(t, obj));
  }
  for (hwloc_obj_t obj = nullptr; (obj = hwloc_get_next_osdev(t, obj));) {
    RawOsDevice d;
    d.name = obj->name ? obj->name : "";
    d.type = OsDeviceType(obj->attr->osdev.type);
    d.subtype = obj->subtype ? obj->subtype : "";
    d.backend = Info(obj, "Backend");
    d.gpu_model = Info(obj, "GPUModel");
    d.node_guid = Info(obj, "NodeGUID");
    hwloc_obj_t parent = obj->parent;
    while (parent && parent->type == HWLOC_OBJ_OS_DEVICE) parent = parent->parent;
    if (auto it = pci_index.find(parent); it != pci_index.end()) {
      d.pci = it->second;
    } else {
      hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(t, obj);
      d.numa = NumaOf(cpu_side);
      d.package = PackageOf(t, cpu_side);
    }
    raw.os_devices.push_back(std::move(d));
  }
  return raw;
}

Error BadXml(const std::string& name, std::string_view why) {
  return Error(ErrorCode::kBadInput, name, fmt::format("{}; expected the output of `lstopo --of xml`", why));
}

// Why hwloc refused an XML document, from its first bytes. hwloc only says
// why when HWLOC_XML_VERBOSE is set, and a newer format is the likely cause.
std::string WhyNotParsed(std::string_view head) {
  size_t at = head.find("<topology version=\"");
  if (at != std::string_view::npos) {
    std::string_view version = head.substr(at + 19, head.find('"', at + 19) - (at + 19));
    if (!version.empty() && version[0] >= '3')
      return fmt::format("hwloc XML format {}: the hwloc linked here reads formats 1 and 2 (export with hwloc 2.x)",
                         version);
  }
  return "not a valid hwloc XML topology";
}

std::string FileHead(const std::string& path) {
  std::string head(4096, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// Points `topology` at the XML and loads it; kBadInput naming `name` on failure.
Status LoadXml(HwlocTopology& topology, bool from_file, const std::string& input, const std::string& name) {
  if (from_file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(input, ec) || !std::ifstream(input).good())
      return Error(ErrorCode::kBadInput, name, "cannot read this hwloc XML file (missing or not a regular file)");
  } else if (input.empty()) {
    return BadXml(name, "empty document");
  }
  // hwloc keeps libxml2's parse errors off stderr unless HWLOC_XML_VERBOSE is set.
  int rc = from_file ? hwloc_topology_set_xml(topology.get(), input.c_str())
                     : hwloc_topology_set_xmlbuffer(topology.get(), input.c_str(), static_cast<int>(input.size() + 1));
  if (rc != 0 || hwloc_topology_load(topology.get()) != 0)
    return BadXml(name, WhyNotParsed(from_file ? FileHead(input) : input.substr(0, 4096)));
  return Ok{};
}

Status LoadLive(HwlocTopology& topology) {
  // PCI devices from Linux's sysfs alone, as when libhwloc-plugins is not
  // installed: its "pci" component (libpciaccess) finds the same devices but
  // leaks its state when hwloc unloads it (LeakSanitizer catches it in every
  // process that loads a layout), and the result must not depend on which
  // hwloc packages a node happens to have.
  hwloc_topology_set_components(topology.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  if (hwloc_topology_load(topology.get()) != 0)
    return Error(ErrorCode::kUnavailable, "hwloc",
                 fmt::format("cannot read this machine's topology: {}", std::strerror(errno)));
  return Ok{};
}

Result<HostLayout> LoadLiveLayout() {
  HwlocTopology topology;
  Status loaded = LoadLive(topology);
  if (!loaded.ok()) return loaded.take_error();
  HostLayout layout = ConvertRawTopology(ReadTopology(topology.get()), "hwloc-live");
  layout.nvml = ProbeNvml(layout);
  return layout;
}

}  // namespace

HwlocLayoutSource HwlocLayoutSource::Live(std::chrono::milliseconds timeout) {
  return HwlocLayoutSource(Kind::kLive, "", "hwloc-live", timeout);
}

HwlocLayoutSource HwlocLayoutSource::FromXmlFile(std::string path) {
  std::string name = path;
  return HwlocLayoutSource(Kind::kXmlFile, std::move(path), std::move(name), kXmlLoadTimeout);
}

HwlocLayoutSource HwlocLayoutSource::FromXmlString(std::string xml, std::string name) {
  return HwlocLayoutSource(Kind::kXmlString, std::move(xml), std::move(name), kXmlLoadTimeout);
}

Result<HostLayout> HwlocLayoutSource::LoadLayout() {
  return kind_ == Kind::kLive ? LoadLiveBounded() : LoadXmlContained();
}

// hwloc reads /sys and /proc, NVML asks the GPU driver; either can block for
// good on a sick node (a GPU fallen off the bus).
Result<HostLayout> HwlocLayoutSource::LoadLiveBounded() const {
  std::optional<Result<HostLayout>> layout =
      CallByDeadline<Result<HostLayout>>(LoadLiveLayout, std::chrono::steady_clock::now() + timeout_);
  if (!layout)
    return Error(ErrorCode::kTimeout, name_,
                 fmt::format("this machine's layout did not load within {:g} s: hwloc reading /sys and /proc, or "
                             "NVML asking the GPU driver, is stuck (a hung driver or device; `nvidia-smi` would hang too)",
                             static_cast<double>(timeout_.count()) / 1000));
  return std::move(*layout);
}

Result<HostLayout> HwlocLayoutSource::LoadXmlInProcess() const {
  HwlocTopology topology;
  Status loaded = LoadXml(topology, kind_ == Kind::kXmlFile, input_, name_);
  if (!loaded.ok()) return loaded.take_error();
  return ConvertRawTopology(ReadTopology(topology.get()), "hwloc-xml:" + std::filesystem::path(name_).filename().string());
}

// The child answers {"layout": ...} or {"error": {"code": N, "problems": [[where, what], ...]}}.
Result<HostLayout> HwlocLayoutSource::LoadXmlContained() const {
  Result<std::string> answer = CallInChildProcess(
      [this] {
        Result<HostLayout> layout = LoadXmlInProcess();
        nlohmann::json out;
        if (layout.ok()) {
          out["layout"] = LayoutToJson(*layout);
        } else {
          nlohmann::json problems = nlohmann::json::array();
          for (const Problem& p : layout.error().problems) problems.push_back({p.where, p.what});
          out["error"] = {{"code", static_cast<int>(layout.error().code)}, {"problems", problems}};
        }
        return DumpJsonText(out, -1);
      },
      kXmlLoadTimeout);
  if (!answer.ok()) {
    if (answer.error().code == ErrorCode::kUnavailable) return answer.take_error();
    std::string what = answer.error().code == ErrorCode::kTimeout
                           ? fmt::format("libhwloc did not finish reading this file in {} s (stopped)",
                                         kXmlLoadTimeout.count() / 1000)
                           : fmt::format("libhwloc crashed reading this file ({})",
                                         answer.error().problems.front().what);
    return Error(ErrorCode::kBadInput, name_,
                 what + "; the file is damaged: export it again with `lstopo --of xml` on that node");
  }
  nlohmann::json doc = nlohmann::json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("layout")) return LayoutFromJson(doc["layout"], "$.layout");
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
    Error error;
    error.code = static_cast<ErrorCode>(doc["error"].value("code", static_cast<int>(ErrorCode::kBadInput)));
    for (const auto& p : doc["error"].value("problems", nlohmann::json::array()))
      if (p.is_array() && p.size() == 2 && p[0].is_string() && p[1].is_string())
        error.problems.push_back({p[0].get<std::string>(), p[1].get<std::string>()});
    if (!error.problems.empty()) return error;
  }
  return Error(ErrorCode::kInternal, name_, "the hwloc reader's answer was not understood");
}

Result<std::string> ExportLocalHwlocXml() {
  HwlocTopology topology;
  Status loaded = LoadLive(topology);
  if (!loaded.ok()) return loaded.take_error();
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(topology.get(), &buffer, &length, 0) != 0 || !buffer)
    return Error(ErrorCode::kUnavailable, "hwloc", "cannot export this machine's topology as XML");
  std::string xml(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);  // length counts the final '\0'
  hwloc_free_xmlbuffer(topology.get(), buffer);
  return xml;
}

}  // namespace topolaunch
