#include "discover/assemble_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <optional>

namespace topolaunch {

namespace {

// Loads every layout, in order, until `stop` is set.
std::vector<Result<HostLayout>> LoadLayouts(const std::vector<LayoutInput>& layouts, const std::atomic<bool>& stop) {
  std::vector<Result<HostLayout>> loaded;
  loaded.reserve(layouts.size());
  for (const LayoutInput& input : layouts) {
    if (stop) break;
    loaded.push_back(input.source->LoadLayout());
  }
  return loaded;
}

}  // namespace

Result<Topology> AssembleTopology(FabricSource* fabric, const NodeNameMap& name_map,
                                  const std::vector<LayoutInput>& layouts, Generated generated) {
  // The layouts load while the fabric is walked: the walk waits on SMP round
  // trips, a live layout on the kernel's sysfs and the GPU driver, so the
  // command takes the longer of the two rather than their sum. A failed
  // walk stops the loading after the layout in hand. Not layouts read in a
  // child process (hwloc XML, contained): a fork while the walk's thread
  // allocates can leave the child waiting forever on a lock that thread
  // held in the parent (ASan's allocator did, one run in two); they load
  // after the walk.
  bool forks = std::any_of(layouts.begin(), layouts.end(), [](const LayoutInput& l) { return l.source && l.source->Forks(); });
  std::atomic<bool> stop{false};
  std::future<std::vector<Result<HostLayout>>> loading =
      std::async(fabric && !layouts.empty() && !forks ? std::launch::async : std::launch::deferred, LoadLayouts,
                 std::cref(layouts), std::cref(stop));
  Topology topology;
  if (fabric) {
    Result<Fabric> loaded = fabric->LoadFabric();
    if (!loaded.ok()) {
      stop = true;
      return loaded.take_error();
    }
    generated.fabric_source = loaded->source;
    topology = BuildTopology(*loaded, name_map, std::move(generated));
  } else {
    generated.fabric_source = "none";
    topology.generated = std::move(generated);
  }
  // Every layout is read even after a bad one, so one run names every
  // damaged export of a cluster's hundreds; any bad one fails the whole
  // (nothing half-assembled is returned).
  std::optional<Error> failed;
  auto fail = [&](Error error) {
    if (!failed) failed = std::move(error);
    else failed->problems.insert(failed->problems.end(), error.problems.begin(), error.problems.end());
  };
  std::vector<Result<HostLayout>> layout_results = loading.get();
  for (size_t i = 0; i < layouts.size(); ++i) {
    const LayoutInput& input = layouts[i];
    Result<HostLayout>& layout = layout_results[i];
    if (!layout.ok()) {
      fail(layout.take_error());
      continue;
    }
    std::string host = !input.host.empty() ? input.host : !layout->hostname.empty() ? layout->hostname : input.fallback_host;
    // hwloc reports the kernel's node name, often fully qualified
    // ("jwb0004.juwels"), while CA descriptions and Slurm use the short
    // name: keep the full name only when the fabric knows the host by it.
    if (input.host.empty() && !topology.FindHost(host)) host = host.substr(0, host.find('.'));
    if (!IsValidHostName(host)) {
      fail(Error(ErrorCode::kBadInput, input.fallback_host,
                 fmt::format("cannot tell which host this layout belongs to (\"{}\" is not a host name)", host)));
      continue;
    }
    AttachLayout(topology, host, std::move(layout).value());
  }
  if (failed) return std::move(*failed);
  return topology;
}

}  // namespace topolaunch
