// ProbeNvml on whatever this machine has, and the pure bus-id normalization.
#include "discover/nvml_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace topolaunch {
namespace {

HostLayout SampleLayout() {
  HostLayout layout;
  layout.source = "hwloc-live";
  Gpu gpu;
  gpu.pci_bus_id = "0000:07:00.0";
  gpu.vendor = "nvidia";
  gpu.model = "GA100 [A100 SXM4 40GB]";
  layout.gpus = {gpu};
  return layout;
}

bool HasNvmlLibrary() {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle) dlclose(handle);
  return handle != nullptr;
}

TEST(NvmlProbe, WithoutADriverSaysSoAndChangesNothing) {
  if (HasNvmlLibrary()) GTEST_SKIP() << "this machine has an NVIDIA driver (libnvidia-ml.so.1): the test needs one without";
  HostLayout layout = SampleLayout();
  NvmlFacts facts = ProbeNvml(layout);
  EXPECT_EQ(facts.status, "no NVIDIA driver");
  EXPECT_EQ(facts.driver_version, "");
  EXPECT_EQ(layout, SampleLayout());
}

TEST(NvmlProbe, WithADriverAnswersAndKeepsTheInventory) {
  if (!HasNvmlLibrary()) GTEST_SKIP() << "no NVIDIA driver here (libnvidia-ml.so.1): the test needs one";
  HostLayout layout = SampleLayout();
  NvmlFacts facts = ProbeNvml(layout);
  if (facts.status == "ok") {
    EXPECT_FALSE(facts.driver_version.empty());
  } else {
    EXPECT_EQ(facts.status.rfind("NVML init failed: ", 0), 0u) << facts.status;
  }
  ASSERT_EQ(layout.gpus.size(), 1u) << "NVML never adds or removes GPUs";
  EXPECT_EQ(layout.gpus[0].pci_bus_id, "0000:07:00.0");
}

HostLayout FourGpus() {
  HostLayout layout;
  for (const char* id : {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0"}) {
    Gpu gpu;
    gpu.pci_bus_id = id;
    gpu.vendor = "nvidia";
    layout.gpus.push_back(gpu);
  }
  return layout;
}

TEST(SetNvLinkPeers, DirectLinksArePeers) {
  // Two pairs bridged directly, each pair with two links (duplicates).
  HostLayout layout = FourGpus();
  SetNvLinkPeers(layout, {{"0000:07:00.0", {"0000:0f:00.0", "0000:0f:00.0"}},
                          {"0000:0f:00.0", {"0000:07:00.0", "0000:07:00.0"}},
                          {"0000:47:00.0", {"0000:4e:00.0"}},
                          {"0000:4e:00.0", {"0000:47:00.0"}}});
  EXPECT_EQ(layout.gpus[0].nvlink_peers, std::vector<std::string>{"0000:0f:00.0"});
  EXPECT_EQ(layout.gpus[1].nvlink_peers, std::vector<std::string>{"0000:07:00.0"});
  EXPECT_EQ(layout.gpus[2].nvlink_peers, std::vector<std::string>{"0000:4e:00.0"});
}

TEST(SetNvLinkPeers, AnNvSwitchConnectsEveryGpuBehindIt) {
  // DGX-like: every link ends at an NVSwitch (bus ids that are not GPUs);
  // the fourth GPU has NVLink switched off.
  HostLayout layout = FourGpus();
  SetNvLinkPeers(layout, {{"0000:07:00.0", {"0000:c1:00.0", "0000:c2:00.0"}},
                          {"0000:0f:00.0", {"0000:c1:00.0"}},
                          {"0000:47:00.0", {"0000:c2:00.0"}},
                          {"0000:4e:00.0", {}}});
  EXPECT_EQ(layout.gpus[0].nvlink_peers, (std::vector<std::string>{"0000:0f:00.0", "0000:47:00.0"}));
  EXPECT_EQ(layout.gpus[2].nvlink_peers, (std::vector<std::string>{"0000:07:00.0", "0000:0f:00.0"}));
  EXPECT_TRUE(layout.gpus[3].nvlink_peers.empty());
}

// NVML's GPU fabric info as topology.json keeps it (nvmlGpuFabricInfo_v2_t's
// fields; state 0 NOT_SUPPORTED .. 3 COMPLETED).
TEST(GpuFabricFromNvml, ConvertsEachStateAndKeepsErrors) {
  const unsigned char uuid[16] = {0x6a, 0x7b, 0x1c, 0x2d, 0x3e, 0x4f, 0x4a, 0x5b,
                                  0x8c, 0x6d, 0x7e, 0x8f, 0x90, 0xa1, 0xb2, 0xc3};
  std::optional<GpuFabric> f = GpuFabricFromNvml(uuid, 0, "", 7, 3, 0x1aau);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(*f, (GpuFabric{"6a7b1c2d-3e4f-4a5b-8c6d-7e8f90a1b2c3", 7, "completed", "ok", {}}));
  EXPECT_TRUE(f->InDomain());
  EXPECT_EQ(GpuFabricFromNvml(uuid, 0, "", 7, 1, std::nullopt)->state, "not_started");
  EXPECT_EQ(GpuFabricFromNvml(uuid, 0, "", 7, 2, std::nullopt)->state, "in_progress");
  EXPECT_EQ(GpuFabricFromNvml(uuid, 0, "", 7, 0, std::nullopt), std::nullopt) << "NOT_SUPPORTED: no fabric";
  EXPECT_EQ(GpuFabricFromNvml(uuid, 0, "", 7, 4, std::nullopt), std::nullopt) << "a state this code does not know";
  // An HGX board completes under the zero UUID without error: no fabric.
  // With an error (a GB200 tray out of resources) it stays, for audit.
  const unsigned char zero[16] = {};
  EXPECT_EQ(GpuFabricFromNvml(zero, 0, "", 0, 3, 0u), std::nullopt);
  std::optional<GpuFabric> failed = GpuFabricFromNvml(zero, 24, "Insufficient Resources", 0, 3, std::nullopt);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status, "Insufficient Resources");
  EXPECT_FALSE(failed->InDomain());
  EXPECT_EQ(GpuFabricFromNvml(uuid, 999, "", 7, 3, std::nullopt)->status, "NVML error 999");
}

TEST(GpuFabricHealthIssues, ReadsEachFieldOfTheMask) {
  EXPECT_TRUE(GpuFabricHealthIssues(0).empty()) << "all fields not supported";
  EXPECT_TRUE(GpuFabricHealthIssues(0x1aau).empty()) << "every two-bit field false, configuration correct";
  EXPECT_EQ(GpuFabricHealthIssues(0x1u), (std::vector<std::string>{"degraded_bandwidth"}));
  EXPECT_EQ(GpuFabricHealthIssues(0x4u), (std::vector<std::string>{"route_recovery"}));
  EXPECT_EQ(GpuFabricHealthIssues(0x10u), (std::vector<std::string>{"route_unhealthy"}));
  EXPECT_EQ(GpuFabricHealthIssues(0x40u), (std::vector<std::string>{"access_timeout_recovery"}));
  EXPECT_EQ(GpuFabricHealthIssues(0x500u), (std::vector<std::string>{"incorrect_configuration"})) << "5: insufficient NVLinks";
  EXPECT_EQ(GpuFabricHealthIssues(0x3u), std::vector<std::string>{}) << "3 is no defined value";
  EXPECT_EQ(GpuFabricHealthIssues(0x51u).size(), 3u);
}

TEST(NormalizePciBusId, AcceptsNvmlAndHwlocForms) {
  struct Case {
    const char* in;
    const char* out;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"00000000:07:00.0", "0000:07:00.0"},  // NVML busId: 8-digit domain
           {"0000:07:00.0", "0000:07:00.0"},      // hwloc / busIdLegacy
           {"00000001:8A:1F.7", "0001:8a:1f.7"},  // upper case, last device and function
           {"0035:03:00.0", "0035:03:00.0"},
           {"07:00.0", "0000:07:00.0"},  // no domain
           {"0:7:0.0", "0000:07:00.0"},  // short fields
       })
    EXPECT_EQ(NormalizePciBusId(c.in), std::optional<std::string>(c.out)) << c.in;
}

TEST(NormalizePciBusId, RejectsWhatIsNotABusId) {
  for (const char* bad :
       {"", "07:00", "0000:07:00", "0000:07:00.8", "0000:07:20.0", "0000:100:00.0", "000000000:07:00.0", "zz:00.0",
        "0000:07:00.0x", ":07:00.0", "0000::00.0", "1:2:3:4.0", "0000:07:00.", "-1:07:00.0"})
    EXPECT_EQ(NormalizePciBusId(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace topolaunch
