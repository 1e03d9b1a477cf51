// The libibnetdisc adapter: the only file that includes <infiniband/*.h>.
//
// Both the live walk and the cache reader end in an ibnd_fabric_t, which
// ConvertFabric() turns into the model with the names ibnetdiscover prints
// (ib_link_names.h), so the three fabric sources agree on the same fabric.
//
// The live walk cannot be cancelled: ibnd_discover_fabric() blocks in
// libibumad, and under ibsim-run the umad2sim shim even retries forever when
// no ibsim listens. It runs on the calling thread, as in `ibnetdiscover`, and
// a watchdog thread keeps its deadline: past it, the watchdog reports and
// ends the process (LiveFabricOptions::past_deadline), which ends the walk.
// The walk used to run on a detached thread of its own, abandoned at the
// deadline, so that the caller got kTimeout back as a value; but the CLI
// could only _Exit after it, and that walk was 90-155 ms slower on a
// 4,096-host fabric in ibsim, this machine's layout loading beside it
// (medians of 24-30 alternating runs, three sessions): a thread's
// malloc arena grows by an mprotect per allocation's worth (~2,300 of them
// in that walk; the main thread's heap grows 128 KiB at a time), and the
// heap warm-up the waiting thread did beside it cost the walk as much as it
// saved after. Killing a helper process instead would be cleaner, but fork
// belongs to the local executor alone. The simulator case is also caught
// before walking, by checking that ibsim's control socket accepts a
// connection, so "ibsim is not running" is reported at once, not as a
// timeout.
#include "discover/ibnetdisc_fabric_source.h"

#include <dirent.h>
#include <infiniband/ibnetdisc.h>
#include <link.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/deadline_watchdog.h"
#include "discover/ib_link_names.h"

namespace topolaunch {

namespace {

// libibnetdisc's cache header starts with this number, written little-endian
// (ibnetdisc_cache.c: "we always cache little endian"), then version 1.
constexpr unsigned char kCacheMagicBytes[4] = {0x2b, 0x83, 0xe7, 0x8f};
constexpr unsigned kPortCapHasExtSpeeds = 0x4000;  // PortInfo CapabilityMask bit 14
constexpr unsigned kMlnxFdr10Bit = 0x01;

// NodeDescription is 64 bytes, NUL padded, sometimes with control bytes;
// ibnetdiscover shows non-printables as spaces. Trailing padding is dropped.
std::string CleanDescription(const char* raw) {
  std::string text(raw, strnlen(raw, IB_SMP_DATA_SIZE));
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// Mirrors ibnetdiscover: a switch advertises extended speeds in port 0's
// capability mask (no port 0: no speed at all); other nodes in their own.
std::string_view PortSpeedName(const ibnd_node_t* node, ibnd_port_t* port) {
  unsigned speed = mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
  ibnd_port_t* cap_port = port;
  if (node->type == IB_NODE_SWITCH) {
    cap_port = node->ports[0];
    if (!cap_port) return "";
  }
  unsigned cap_mask = mad_get_field(cap_port->info, 0, IB_PORT_CAPMASK_F);
  unsigned ext = (cap_mask & kPortCapHasExtSpeeds) ? mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F) : 0;
  bool fdr10 = mad_get_field(port->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & kMlnxFdr10Bit;
  return IbLinkSpeedName(speed, ext, fdr10);
}

// The highest bit set in a PortInfo "supported" mask (0 when none).
unsigned HighestBit(unsigned mask) {
  unsigned bit = 0;
  for (unsigned b = 1; b && b <= mask; b <<= 1)
    if (mask & b) bit = b;
  return bit;
}

// The widest LinkWidthSupported: the codes are not ordered by width
// (16 = 2X), so each is ranked by its lane count.
std::string_view SupportedWidthName(unsigned mask) {
  std::string_view best;
  int best_lanes = 0;
  for (unsigned code : {1u, 16u, 2u, 4u, 8u}) {
    if (!(mask & code)) continue;
    std::string_view name = IbLinkWidthName(code);
    int lanes = std::atoi(std::string(name).c_str());
    if (lanes > best_lanes) best = name, best_lanes = lanes;
  }
  return best;
}

// The fastest supported speed, by the same rules as the active one.
std::string_view SupportedSpeedName(const ibnd_node_t* node, ibnd_port_t* port) {
  unsigned speed = HighestBit(mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_SUPPORTED_F));
  ibnd_port_t* cap_port = node->type == IB_NODE_SWITCH ? node->ports[0] : port;
  if (!cap_port) return "";
  unsigned cap_mask = mad_get_field(cap_port->info, 0, IB_PORT_CAPMASK_F);
  unsigned ext = (cap_mask & kPortCapHasExtSpeeds) ? mad_get_field(port->info, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F) : 0;
  // Highest extended bit first; a bit this program has no name for is skipped.
  for (unsigned bit = HighestBit(ext); bit; bit >>= 1)
    if ((ext & bit) && !IbLinkSpeedName(speed, bit, false).empty()) return IbLinkSpeedName(speed, bit, false);
  bool fdr10 = mad_get_field(port->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F) & kMlnxFdr10Bit;
  return IbLinkSpeedName(speed, 0, fdr10);
}

// Fills `out` in place: a port built aside and moved into the node's vector
// cost ~20% of the conversion (five strings each, ~20,000 ports at 4,096 hosts).
void ConvertPort(const ibnd_node_t* node, ibnd_port_t* port, FabricPort& out) {
  out.number = port->portnum;
  out.port_guid = port->guid;
  // Switch external ports have no LID of their own; ibnetdiscover shows the
  // switch's (port 0's) LID for them, and so do we.
  out.lid = node->type == IB_NODE_SWITCH ? node->smalid : static_cast<int>(mad_get_field(port->info, 0, IB_PORT_LID_F));
  out.state = IbPortStateName(mad_get_field(port->info, 0, IB_PORT_STATE_F));
  // The active width/speed of a port whose link is down mean nothing.
  if (out.state != "Down") {
    out.width = IbLinkWidthName(mad_get_field(port->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
    out.speed = PortSpeedName(node, port);
  }
  out.supported_width = SupportedWidthName(mad_get_field(port->info, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F));
  out.supported_speed = SupportedSpeedName(node, port);
  if (port->remoteport && port->remoteport->node)
    out.remote = PortRef{port->remoteport->node->guid, port->remoteport->portnum};
}

NodeType ConvertNodeType(int type) {
  if (type == IB_NODE_SWITCH) return NodeType::kSwitch;
  if (type == IB_NODE_ROUTER) return NodeType::kRouter;
  return NodeType::kCa;
}

// Fills `out`, whose ports' room is already reserved (see ConvertFabric).
void ConvertNode(ibnd_node_t* node, FabricNode& out) {
  out.type = ConvertNodeType(node->type);
  out.guid = node->guid;
  out.system_guid = mad_get_field64(node->info, 0, IB_NODE_SYSTEM_GUID_F);
  out.description = CleanDescription(node->nodedesc);
  out.num_ports = node->numports;
  // Port 0 of a switch is its management port, not a cable end: left out,
  // as in ibnetdiscover's dump.
  for (int p = 1; p <= node->numports; ++p)
    if (ibnd_port_t* port = node->ports[p]) ConvertPort(node, port, out.ports.emplace_back());
}

// Converting waits on memory, not on arithmetic: libibnetdisc's nodes and
// ports lie scattered over the heap the walk grew, and each port leads to
// its peer's. So two threads convert, half the ports each, and take twice
// as many misses at once. This thread makes the room for all of them first,
// in GUID order, from the heap the walk grew (a helper's first allocations
// would come from an arena of its own, paged in afresh); the helper only
// writes into it. At 4,096 hosts, on pages already mapped, converting went
// from ~10 to ~7 ms, and building the topology from the result from ~10 to
// ~6 (it reads the nodes in the order they now lie in memory).
Fabric ConvertFabric(ibnd_fabric_t* fabric, std::string source) {
  struct Entry {
    Guid guid;
    size_t ports;
    ibnd_node_t* node;
  };
  std::vector<Entry> order;
  size_t ports = 0;
  for (ibnd_node_t* node = fabric->nodes; node; node = node->next) {
    order.push_back({node->guid, static_cast<size_t>(std::max(node->numports, 0)), node});
    ports += order.back().ports;
  }
  // Discovery order depends on the starting port; GUID order does not.
  std::sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) { return a.guid < b.guid; });
  Fabric out;
  out.source = std::move(source);
  out.nodes.resize(order.size());
  size_t half = order.size(), counted = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    out.nodes[i].ports.reserve(order[i].ports);
    counted += order[i].ports;
    if (half == order.size() && 2 * counted >= ports) half = i + 1;
  }
  auto convert = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) ConvertNode(order[i].node, out.nodes[i]);
  };
  std::thread helper(convert, half, order.size());
  convert(0, half);
  helper.join();
  return out;
}

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};
using FabricPtr = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

std::string PortName(const LiveFabricOptions& o) {
  return fmt::format("CA {} port {}", o.ca.empty() ? "(first)" : o.ca, o.port == 0 ? "(first active)" : std::to_string(o.port));
}

int FindSharedObject(dl_phdr_info* info, size_t, void* found) {
  if (info->dlpi_name && std::strstr(info->dlpi_name, "libumad2sim")) *static_cast<bool*>(found) = true;
  return 0;
}

// Under ibsim-run, libumad2sim is preloaded and reads IBSIM_SOCKNAME itself;
// we look at the same variable only to tell "ibsim is not running" apart
// from a hang. Returns the problem, or nullopt when there is nothing to say.
std::optional<std::string> CheckSimulator() {
  bool preloaded = false;
  dl_iterate_phdr(FindSharedObject, &preloaded);
  const char* remote = std::getenv("IBSIM_SERVER_NAME");
  if (!preloaded || (remote && *remote)) return std::nullopt;
  const char* env = std::getenv("IBSIM_SOCKNAME");
  std::string name = std::string(env && *env ? env : "sim") + ":ctl";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t length = std::min(name.size(), sizeof addr.sun_path - 2);
  std::memcpy(addr.sun_path + 1, name.data(), length);
  // An abstract name (leading NUL); umad2sim counts the trailing NUL in it.
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length + 1);
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  if (fd < 0) return std::nullopt;
  bool listening = connect(fd, reinterpret_cast<sockaddr*>(&addr), size) == 0;
  close(fd);
  if (listening) return std::nullopt;
  return fmt::format("running under ibsim-run, but no ibsim listens on socket '{}' (IBSIM_SOCKNAME={}): "
                     "start `ibsim -s NETFILE` with the same IBSIM_SOCKNAME first", name, env ? env : "unset");
}

// The InfiniBand devices sysfs lists (umad2sim redirects scandir to its own
// simulated sysfs). libibumad's own listing invents "mthca0" when there is none.
std::vector<std::string> ListCas() {
  std::vector<std::string> names;
  dirent** entries = nullptr;
  int n = scandir("/sys/class/infiniband", &entries, nullptr, alphasort);
  for (int i = 0; i < n; ++i) {
    std::string name = entries[i]->d_name;
    if (name != "." && name != "..") names.push_back(name);
    free(entries[i]);
  }
  if (n >= 0) free(entries);
  return names;
}

// The fabric comes back raw, for ConvertFabric.
Result<FabricPtr> Walk(const LiveFabricOptions& o) {
  std::vector<std::string> cas = ListCas();
  if (cas.empty())
    return Error(ErrorCode::kUnavailable, PortName(o),
                 "no InfiniBand HCA found (no device in /sys/class/infiniband; is ibsim running and this "
                 "program started under ibsim-run? or read a dump with --fabric FILE)");
  if (!o.ca.empty() && std::find(cas.begin(), cas.end(), o.ca) == cas.end())
    return Error(ErrorCode::kUnavailable, PortName(o), fmt::format("no HCA named '{}' (found: {})", o.ca, fmt::join(cas, ", ")));
  ibnd_config_t cfg{};
  cfg.timeout_ms = static_cast<unsigned>(o.mad_timeout.count());
  cfg.max_hops = static_cast<unsigned>(o.max_hops);
  cfg.max_smps = static_cast<unsigned>(o.max_smps);
  cfg.show_progress = 0;  // it would print to stdout, where our data goes
  cfg.flags = IBND_CONFIG_MLX_EPI;  // ask for FDR10, as ibnetdiscover does
  std::string ca = o.ca;
  FabricPtr fabric(ibnd_discover_fabric(ca.empty() ? nullptr : ca.data(), o.port, nullptr, &cfg));
  if (!fabric)
    return Error(ErrorCode::kUnavailable, PortName(o),
                 "libibnetdisc could not walk the fabric (its reason is on stderr above; "
                 "is the port up and is this user allowed to open /dev/infiniband/umad*?)");
  return fabric;
}

// The watchdog's answer to a walk past its deadline: the walk holds the
// calling thread and cannot be stopped, so the process ends here.
[[noreturn]] void EndPastDeadline(const LiveFabricOptions& o) {
  Error late(ErrorCode::kTimeout, PortName(o),
             fmt::format("the fabric walk did not finish within {} ms (a large fabric may need a longer timeout)",
                         o.timeout.count()));
  if (o.past_deadline) o.past_deadline(late);
  fmt::print(stderr, "{}\n", late.Message());
  std::fflush(nullptr);
  std::_Exit(ExitStatusFor(late.code));
}

}  // namespace

IbnetdiscFabricSource::~IbnetdiscFabricSource() {
  if (releasing_.joinable()) releasing_.join();
}

Result<Fabric> IbnetdiscFabricSource::LoadFabric() {
  if (std::optional<std::string> problem = CheckSimulator())
    return Error(ErrorCode::kUnavailable, PortName(options_), *problem);
  Result<FabricPtr> walked = [this] {
    DeadlineWatchdog watchdog(std::chrono::steady_clock::now() + options_.timeout, std::chrono::seconds(1),
                              options_.still_walking, [this] { EndPastDeadline(options_); });
    return Walk(options_);
  }();
  if (!walked.ok()) return walked.take_error();
  Result<Fabric> result = ConvertFabric(walked->get(), "live");
  // Freeing libibnetdisc's nodes and ports takes a few ms: done beside
  // whatever the caller does next, joined by the destructor (or here, by a
  // second walk).
  if (releasing_.joinable()) releasing_.join();
  releasing_ = std::thread([fabric = std::move(walked).value()]() mutable { fabric.reset(); });
  if (options_.progress) options_.progress(static_cast<int>(result->nodes.size()));
  return result;
}

Result<Fabric> IbnetdiscCacheFabricSource::LoadFabric() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Error(ErrorCode::kBadInput, path_, fmt::format("cannot open the cache file: {}", std::strerror(errno)));
  char head[8] = {};
  in.read(head, sizeof head);
  if (!HasIbnetdiscCacheMagic(std::string_view(head, static_cast<size_t>(in.gcount()))))
    return Error(ErrorCode::kBadInput, path_, "not a libibnetdisc cache (expected magic 0x8fe7832b, as written by `ibnetdiscover --cache FILE`)");
  FabricPtr fabric(ibnd_load_fabric(path_.c_str(), 0));
  if (!fabric)
    return Error(ErrorCode::kBadInput, path_, "libibnetdisc could not load this cache (truncated, corrupt, or a cache version other than 1)");
  return ConvertFabric(fabric.get(), "cache");
}

bool HasIbnetdiscCacheMagic(std::string_view head) {
  return head.size() >= sizeof kCacheMagicBytes && std::memcmp(head.data(), kCacheMagicBytes, sizeof kCacheMagicBytes) == 0;
}

}  // namespace topolaunch
