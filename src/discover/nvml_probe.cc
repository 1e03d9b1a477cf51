// NVML through dlopen, with the few declarations we need written out here.
//
// nvml.h comes with the CUDA Toolkit, which build machines and CPU-only
// login nodes do not have, while GPU nodes always have libnvidia-ml.so.1
// from the driver. So the declarations below copy the documented, stable
// ABI of the handful of calls used (the _v2/_v3 names are the versioned
// symbols NVML keeps forever), and a missing library is an answer, not an
// error.
#include "discover/nvml_probe.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace topolaunch {

namespace {

using nvmlReturn_t = int;  // an enum in nvml.h; NVML_SUCCESS is 0
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEnableState_t = int;  // NVML_FEATURE_ENABLED is 1
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlEnableState_t kNvmlFeatureEnabled = 1;
constexpr unsigned kNvmlMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS (Hopper: 18)

// nvmlPciInfo_t as returned by the _v3 and _v2 calls used here.
struct NvmlPciInfo {
  char bus_id_legacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_subsystem_id;
  char bus_id[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:07:00.0"
};

// nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo, R525+) and its versioned
// successor nvmlGpuFabricInfo_v2_t (nvmlDeviceGetGpuFabricInfoV, R535+),
// field for field as nvml.h declares them.
struct NvmlGpuFabricInfo {
  unsigned char cluster_uuid[16];  // NVML_GPU_FABRIC_UUID_LEN
  nvmlReturn_t status;
  unsigned clique_id;
  unsigned char state;             // nvmlGpuFabricState_t
};
struct NvmlGpuFabricInfoV2 {
  unsigned version;
  unsigned char cluster_uuid[16];
  nvmlReturn_t status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
};
static_assert(sizeof(NvmlGpuFabricInfo) == 28 && sizeof(NvmlGpuFabricInfoV2) == 36, "nvml.h's layouts");
// NVML_STRUCT_VERSION(GpuFabricInfo, 2): the size, and the version in the top byte.
constexpr unsigned kGpuFabricInfoV2 = static_cast<unsigned>(sizeof(NvmlGpuFabricInfoV2)) | (2u << 24);

// The loaded library and its entry points; unloads on destruction.
struct Nvml {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvlink_remote)(nvmlDevice_t, unsigned, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*fabric_info)(nvmlDevice_t, NvmlGpuFabricInfo*) = nullptr;
  nvmlReturn_t (*fabric_info_v)(nvmlDevice_t, NvmlGpuFabricInfoV2*) = nullptr;

  ~Nvml() {
    if (handle) dlclose(handle);
  }

  template <typename F>
  void Bind(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(dlsym(handle, symbol));
  }

  // The symbols missing from this library, empty when all required ones are
  // there (name and NVLink calls are optional).
  std::string Load() {
    Bind(init, "nvmlInit_v2");
    Bind(shutdown, "nvmlShutdown");
    Bind(error_string, "nvmlErrorString");
    Bind(driver_version, "nvmlSystemGetDriverVersion");
    Bind(count, "nvmlDeviceGetCount_v2");
    Bind(by_index, "nvmlDeviceGetHandleByIndex_v2");
    Bind(pci_info, "nvmlDeviceGetPciInfo_v3");
    Bind(name, "nvmlDeviceGetName");
    Bind(nvlink_state, "nvmlDeviceGetNvLinkState");
    Bind(nvlink_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    Bind(fabric_info, "nvmlDeviceGetGpuFabricInfo");
    Bind(fabric_info_v, "nvmlDeviceGetGpuFabricInfoV");
    if (!init || !shutdown || !error_string || !count || !by_index || !pci_info)
      return "nvmlInit_v2/nvmlDeviceGetPciInfo_v3";
    return "";
  }

  std::string Reason(nvmlReturn_t rc) const {
    const char* text = error_string(rc);
    return text ? text : fmt::format("error {}", rc);
  }
};

std::optional<std::string> BusIdOf(const NvmlPciInfo& info) {
  std::string_view id(info.bus_id, strnlen(info.bus_id, sizeof info.bus_id));
  if (auto normal = NormalizePciBusId(id)) return normal;
  return NormalizePciBusId(
      std::string_view(info.bus_id_legacy, strnlen(info.bus_id_legacy, sizeof info.bus_id_legacy)));
}

// Remote ends of the active NVLinks of `device`, as normalized bus ids.
std::vector<std::string> NvLinkRemotes(const Nvml& nvml, nvmlDevice_t device) {
  std::vector<std::string> remotes;
  if (!nvml.nvlink_state || !nvml.nvlink_remote) return remotes;
  for (unsigned link = 0; link < kNvmlMaxNvLinks; ++link) {
    nvmlEnableState_t active = 0;
    if (nvml.nvlink_state(device, link, &active) != kNvmlSuccess || active != kNvmlFeatureEnabled) continue;
    NvmlPciInfo remote{};
    if (nvml.nvlink_remote(device, link, &remote) != kNvmlSuccess) continue;
    if (auto id = BusIdOf(remote)) remotes.push_back(*id);
  }
  return remotes;
}

// The GPU's fabric info: the versioned call where the driver has it (it adds
// the health mask), else the first one. A GPU outside any NVLink fabric
// answers NOT_SUPPORTED (the call, or the state): nullopt.
std::optional<GpuFabric> FabricOf(const Nvml& nvml, nvmlDevice_t device) {
  if (nvml.fabric_info_v) {
    NvmlGpuFabricInfoV2 info{};
    info.version = kGpuFabricInfoV2;
    if (nvml.fabric_info_v(device, &info) == kNvmlSuccess)
      return GpuFabricFromNvml(info.cluster_uuid, info.status, info.status ? nvml.Reason(info.status) : "",
                               info.clique_id, info.state, info.health_mask);
  }
  if (nvml.fabric_info) {
    NvmlGpuFabricInfo info{};
    if (nvml.fabric_info(device, &info) == kNvmlSuccess)
      return GpuFabricFromNvml(info.cluster_uuid, info.status, info.status ? nvml.Reason(info.status) : "",
                               info.clique_id, info.state, std::nullopt);
  }
  return std::nullopt;
}

void ReadDevices(const Nvml& nvml, HostLayout& layout) {
  unsigned count = 0;
  if (nvml.count(&count) != kNvmlSuccess) return;
  std::map<std::string, std::vector<std::string>> remotes;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    NvmlPciInfo info{};
    if (nvml.by_index(i, &device) != kNvmlSuccess || nvml.pci_info(device, &info) != kNvmlSuccess) continue;
    std::optional<std::string> bus_id = BusIdOf(info);
    auto gpu = std::find_if(layout.gpus.begin(), layout.gpus.end(),
                            [&](const Gpu& g) { return bus_id && g.pci_bus_id == *bus_id; });
    if (gpu == layout.gpus.end()) continue;  // hwloc is the inventory; NVML only adds detail
    char name[96] = {};                      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
    if (nvml.name && nvml.name(device, name, sizeof name) == kNvmlSuccess && name[0]) gpu->model = name;
    remotes[gpu->pci_bus_id] = NvLinkRemotes(nvml, device);
    gpu->nvlink_fabric = FabricOf(nvml, device);
  }
  SetNvLinkPeers(layout, remotes);
}

bool ParseHex(std::string_view text, size_t max_digits, unsigned max_value, unsigned& out) {
  if (text.empty() || text.size() > max_digits) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
  return ec == std::errc() && end == text.data() + text.size() && out <= max_value;
}

}  // namespace

std::optional<GpuFabric> GpuFabricFromNvml(const unsigned char (&uuid)[16], int status, std::string_view status_text,
                                           unsigned clique_id, unsigned state, std::optional<unsigned> health_mask) {
  // nvmlGpuFabricState_t: 0 NOT_SUPPORTED, 1 NOT_STARTED, 2 IN_PROGRESS, 3 COMPLETED.
  if (state < 1 || state > 3) return std::nullopt;
  GpuFabric f;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) f.cluster_uuid += '-';
    f.cluster_uuid += fmt::format("{:02x}", uuid[i]);
  }
  f.clique_id = clique_id;
  f.state = std::string(kGpuFabricStates[state - 1]);
  f.status = status == kNvmlSuccess ? "ok" : status_text.empty() ? fmt::format("NVML error {}", status) : std::string(status_text);
  if (health_mask) f.health = GpuFabricHealthIssues(*health_mask);
  // HGX boards (NVLink inside the host only) complete with a zero UUID and
  // no error: no multi-node fabric. With an error it is a fabric GPU that
  // failed to register, which audit must see.
  if (f.cluster_uuid == kZeroFabricUuid && f.state == "completed" && f.status == "ok") return std::nullopt;
  return f;
}

std::vector<std::string> GpuFabricHealthIssues(unsigned health_mask) {
  // NVML_GPU_FABRIC_HEALTH_MASK_*: four 2-bit fields where 1 means "yes"
  // (degraded, recovering, unhealthy), then a 4-bit configuration field
  // where 1 means "correct" and 2.. name what is wrong.
  std::vector<std::string> issues;
  for (size_t field = 0; field < 4; ++field)
    if (((health_mask >> (2 * field)) & 0x3u) == 1) issues.emplace_back(kGpuFabricHealthIssues[field]);
  if (((health_mask >> 8) & 0xfu) >= 2) issues.emplace_back(kGpuFabricHealthIssues[4]);
  return issues;
}

std::optional<std::string> NormalizePciBusId(std::string_view text) {
  // [domain:]bus:device.function
  size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> parts;
  std::string_view head = text.substr(0, dot);
  for (size_t start = 0;;) {
    size_t colon = head.find(':', start);
    parts.push_back(head.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (parts.size() != 3 || !ParseHex(parts[0], 8, 0xffffffffu, domain) || !ParseHex(parts[1], 2, 0xff, bus) ||
      !ParseHex(parts[2], 2, 0x1f, dev) || !ParseHex(text.substr(dot + 1), 1, 7, fn))
    return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}

void SetNvLinkPeers(HostLayout& layout, const std::map<std::string, std::vector<std::string>>& remotes) {
  std::set<std::string> gpus, switched;
  for (const Gpu& g : layout.gpus) gpus.insert(g.pci_bus_id);
  for (const auto& [gpu, ends] : remotes)
    for (const std::string& end : ends)
      if (!gpus.count(end)) switched.insert(gpu);
  for (Gpu& g : layout.gpus) {
    auto it = remotes.find(g.pci_bus_id);
    if (it == remotes.end()) continue;
    std::set<std::string> peers;
    for (const std::string& end : it->second)
      if (gpus.count(end) && end != g.pci_bus_id) peers.insert(end);
    if (switched.count(g.pci_bus_id))
      for (const std::string& other : switched)
        if (other != g.pci_bus_id) peers.insert(other);
    g.nvlink_peers.assign(peers.begin(), peers.end());
  }
}

HostLayout NvmlGpuLayout(const std::vector<std::string>& bus_ids) {
  HostLayout layout;
  for (const std::string& id : bus_ids) {
    Gpu& gpu = layout.gpus.emplace_back();
    gpu.pci_bus_id = id;
    gpu.vendor = "nvidia";
  }
  if (!layout.gpus.empty()) layout.nvml = ProbeNvml(layout);
  return layout;
}

NvmlFacts ProbeNvml(HostLayout& layout) {
  Nvml nvml;
  nvml.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml.handle) return {"no NVIDIA driver", ""};
  if (std::string missing = nvml.Load(); !missing.empty())
    return {fmt::format("NVML too old or incomplete (missing {})", missing), ""};
  if (nvmlReturn_t rc = nvml.init(); rc != kNvmlSuccess) return {"NVML init failed: " + nvml.Reason(rc), ""};
  NvmlFacts facts{"ok", ""};
  char version[80] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
  if (nvml.driver_version && nvml.driver_version(version, sizeof version) == kNvmlSuccess)
    facts.driver_version = version;
  ReadDevices(nvml, layout);
  nvml.shutdown();
  return facts;
}

}  // namespace topolaunch
