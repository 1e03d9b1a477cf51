// The libibmad adapter for port counters: the only file that includes
// <infiniband/mad.h> (and libibumad's <infiniband/umad.h> with it).
//
// ibqueryerrors asks one port at a time, so a fabric audit costs one MAD
// round trip per port. Here up to `parallel` PortCounters queries are in
// flight at once on a single umad port: requests are sent with umad_send,
// answers matched to them by transaction ID as they arrive, lost ones sent
// again up to `retries` times. One port rather than one per thread, because
// umad2sim (ibsim) shares one simulator connection between all ports of a
// process and then hands some answers to the wrong one.
//
// As in the fabric walk, a blocked umad call cannot be cancelled: the
// query loop runs on a helper thread that owns everything it touches
// through a shared_ptr, and at the deadline the caller returns kTimeout and
// leaves it behind. (The walk itself runs on the caller's thread, under a
// watchdog that ends the process at the deadline: ibnetdisc_fabric_source.cc.)
#include "audit/audit_counters_source.h"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace topolaunch {

namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned kErrorCounterSelect = 0x0fff;  // CounterSelect bits 0-11: the error counters

struct CounterField {
  std::string_view name;
  MAD_FIELDS field;
};

const CounterField kFields[] = {
    {"SymbolErrorCounter", IB_PC_ERR_SYM_F},
    {"LinkErrorRecoveryCounter", IB_PC_LINK_RECOVERS_F},
    {"LinkDownedCounter", IB_PC_LINK_DOWNED_F},
    {"PortRcvErrors", IB_PC_ERR_RCV_F},
    {"PortRcvRemotePhysicalErrors", IB_PC_ERR_PHYSRCV_F},
    {"PortRcvSwitchRelayErrors", IB_PC_ERR_SWITCH_REL_F},
    {"PortXmitDiscards", IB_PC_XMT_DISCARDS_F},
    {"PortXmitConstraintErrors", IB_PC_ERR_XMTCONSTR_F},
    {"PortRcvConstraintErrors", IB_PC_ERR_RCVCONSTR_F},
    {"LocalLinkIntegrityErrors", IB_PC_ERR_LOCALINTEG_F},
    {"ExcessiveBufferOverrunErrors", IB_PC_ERR_EXCESS_OVR_F},
    {"VL15Dropped", IB_PC_VL15_DROPPED_F},
    {"PortXmitWait", IB_PC_XMT_WAIT_F},
};

struct Shared {
  Shared(std::vector<CounterTarget> t, CounterQueryOptions o) : targets(std::move(t)), options(std::move(o)) {}
  const std::vector<CounterTarget> targets;
  const CounterQueryOptions options;
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  bool opened = false;
  CounterPass pass;
};

struct InFlight {
  size_t target = 0;
  int attempts = 0;
  Clock::time_point expires;
};

class Querier {
 public:
  Querier(ibmad_port* port, const Shared& shared)
      : fd_(mad_rpc_portid(port)), agent_(mad_rpc_class_agent(port, IB_PERFORMANCE_CLASS)), shared_(shared),
        send_(umad_alloc(1, umad_size() + IB_MAD_SIZE)), recv_(umad_alloc(1, umad_size() + IB_MAD_SIZE)) {}
  ~Querier() {
    umad_free(send_);
    umad_free(recv_);
  }
  void Run(CounterPass& pass);

 private:
  bool Send(size_t target, int attempts);
  void Receive(CounterPass& pass);
  void Expire(CounterPass& pass);
  void Unanswered(size_t target, CounterPass& pass);

  int fd_;
  int agent_;
  const Shared& shared_;
  void* send_;
  void* recv_;
  std::map<uint32_t, InFlight> in_flight_;
};

bool Querier::Send(size_t target, int attempts) {
  const CounterTarget& t = shared_.targets[target];
  ib_portid_t portid{};
  ib_portid_set(&portid, t.lid, 1, IB_DEFAULT_QP1_QKEY);
  ib_rpc_t rpc{};
  rpc.mgtclass = IB_PERFORMANCE_CLASS;
  rpc.method = IB_MAD_METHOD_GET;
  rpc.attr.id = IB_GSI_PORT_COUNTERS;
  rpc.timeout = static_cast<int>(shared_.options.mad_timeout.count());
  rpc.datasz = IB_PC_DATA_SZ;
  rpc.dataoffs = IB_PC_DATA_OFFS;
  rpc.trid = mad_trid();
  uint8_t data[IB_PC_DATA_SZ] = {};
  mad_set_field(data, 0, IB_PC_PORT_SELECT_F, static_cast<uint32_t>(t.port.port));
  int length = mad_build_pkt(send_, &rpc, &portid, nullptr, data);
  if (length < 0 || umad_send(fd_, agent_, send_, length, rpc.timeout, 0) < 0) return false;
  in_flight_[static_cast<uint32_t>(rpc.trid)] = {target, attempts, Clock::now() + shared_.options.mad_timeout};
  return true;
}

void Querier::Unanswered(size_t target, CounterPass& pass) {
  const CounterTarget& t = shared_.targets[target];
  pass.unanswered.push_back(fmt::format("{} port {} (LID {})", FormatGuid(t.port.node_guid), t.port.port, t.lid));
}

void Querier::Receive(CounterPass& pass) {
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::min_element(in_flight_.begin(), in_flight_.end(), [](const auto& a, const auto& b) {
        return a.second.expires < b.second.expires;
      })->second.expires - Clock::now());
  int length = IB_MAD_SIZE;
  if (umad_recv(fd_, recv_, &length, static_cast<int>(std::max<long long>(wait.count(), 1))) < 0) return;
  const uint8_t* mad = static_cast<const uint8_t*>(umad_get_mad(recv_));
  auto it = in_flight_.find(static_cast<uint32_t>(mad_get_field64(const_cast<uint8_t*>(mad), 0, IB_MAD_TRID_F)));
  if (it == in_flight_.end()) return;  // a late answer to a request already resent
  InFlight sent = it->second;
  in_flight_.erase(it);
  if (umad_status(recv_) != 0 || mad_get_field(const_cast<uint8_t*>(mad), 0, IB_MAD_STATUS_F) != 0) {
    if (sent.attempts >= shared_.options.retries || !Send(sent.target, sent.attempts + 1)) Unanswered(sent.target, pass);
    return;
  }
  const CounterTarget& t = shared_.targets[sent.target];
  CounterSample sample{t.port, t.remote, {}};
  uint8_t* counters = const_cast<uint8_t*>(mad) + IB_PC_DATA_OFFS;
  for (const CounterField& f : kFields) {
    uint32_t value = 0;
    mad_decode_field(counters, f.field, &value);
    sample.values[std::string(f.name)] = value;
  }
  pass.samples.push_back(std::move(sample));
}

void Querier::Expire(CounterPass& pass) {
  Clock::time_point now = Clock::now();
  std::vector<InFlight> late;
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.expires > now) {
      ++it;
      continue;
    }
    late.push_back(it->second);
    it = in_flight_.erase(it);
  }
  for (const InFlight& sent : late)
    if (sent.attempts >= shared_.options.retries || !Send(sent.target, sent.attempts + 1)) Unanswered(sent.target, pass);
}

void Querier::Run(CounterPass& pass) {
  const size_t window = static_cast<size_t>(std::max(1, shared_.options.parallel));
  size_t next = 0;
  while (next < shared_.targets.size() || !in_flight_.empty()) {
    while (next < shared_.targets.size() && in_flight_.size() < window) {
      if (!Send(next, 0)) Unanswered(next, pass);
      ++next;
    }
    if (in_flight_.empty()) continue;
    Receive(pass);
    Expire(pass);
  }
}

// Clears the error counters of every port that answered, one at a time
// (rarely used; the synchronous call is simplest).
void Reset(ibmad_port* port, const Shared& shared, const CounterPass& pass) {
  for (const CounterSample& s : pass.samples)
    for (const CounterTarget& t : shared.targets)
      if (t.port == s.port) {
        ib_portid_t portid{};
        ib_portid_set(&portid, t.lid, 1, IB_DEFAULT_QP1_QKEY);
        uint8_t buf[1024] = {};
        performance_reset_via(buf, &portid, t.port.port, kErrorCounterSelect,
                              static_cast<int>(shared.options.mad_timeout.count()), IB_GSI_PORT_COUNTERS, port);
        break;
      }
}

void Work(const std::shared_ptr<Shared>& shared) {
  int classes[] = {IB_SMI_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
  std::string ca = shared->options.ca;
  ibmad_port* port = mad_rpc_open_port(ca.empty() ? nullptr : ca.data(), shared->options.port, classes, 3);
  CounterPass pass;
  if (port) {
    Querier(port, *shared).Run(pass);
    if (shared->options.reset_after) Reset(port, *shared, pass);
    mad_rpc_close_port(port);
  }
  std::lock_guard lock(shared->mutex);
  shared->opened = port != nullptr;
  shared->pass = std::move(pass);
  shared->finished = true;
  shared->done.notify_all();
}

}  // namespace

std::vector<CounterTarget> CounterTargets(const Fabric& fabric) {
  std::vector<CounterTarget> out;
  for (const FabricNode& node : fabric.nodes)
    for (const FabricPort& port : node.ports)
      if (port.remote && port.state == "Active" && port.lid > 0)
        out.push_back({{node.guid, port.number}, port.lid, port.remote});
  return out;
}

Result<CounterPass> MadPortCounterSource::Read(const std::vector<CounterTarget>& targets,
                                               std::chrono::steady_clock::time_point deadline) {
  auto shared = std::make_shared<Shared>(targets, options_);
  std::thread([shared] { Work(shared); }).detach();  // see the file comment
  std::unique_lock lock(shared->mutex);
  if (!shared->done.wait_until(lock, deadline, [&] { return shared->finished; }))
    return Error(ErrorCode::kTimeout, "port counters",
                 fmt::format("reading the counters of {} ports did not finish before the deadline", targets.size()));
  if (!shared->opened)
    return Error(ErrorCode::kUnavailable, fmt::format("CA {} port {}", options_.ca.empty() ? "(first)" : options_.ca,
                                                       options_.port == 0 ? "(first active)" : std::to_string(options_.port)),
                 "libibmad could not open a umad port for performance queries (no HCA, or no permission on "
                 "/dev/infiniband/umad*)");
  std::sort(shared->pass.samples.begin(), shared->pass.samples.end(),
            [](const CounterSample& a, const CounterSample& b) { return a.port < b.port; });
  return std::move(shared->pass);
}

}  // namespace topolaunch
