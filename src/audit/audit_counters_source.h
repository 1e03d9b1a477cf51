// Reading port error counters over the fabric (PerfMgt PortCounters through
// libibmad). Only the .cc includes <infiniband/mad.h>.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "audit/audit_counters.h"
#include "topolaunch/fabric.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// A port to query: where it is (LID, port number) and which cable end it is.
struct CounterTarget {
  PortRef port;
  int lid = 0;
  std::optional<PortRef> remote;
};

/// The linked, Active ports of a fabric that have a LID (switch ports by the
/// switch's LID), in fabric order.
std::vector<CounterTarget> CounterTargets(const Fabric& fabric);

struct CounterQueryOptions {
  std::string ca;  ///< local HCA; empty = the first
  int port = 0;    ///< its port; 0 = the first active
  int parallel = 32;  ///< PortCounters queries in flight at once
  std::chrono::milliseconds mad_timeout{500};  ///< per query, before retries
  int retries = 2;
  bool reset_after = false;  ///< clear the error counters once read
};

/// What a pass over the targets gave: a sample per port that answered, and
/// the ports that did not (described).
struct CounterPass {
  std::vector<CounterSample> samples;
  std::vector<std::string> unanswered;
};

class PortCounterSource {
 public:
  virtual ~PortCounterSource() = default;
  /// Queries every target once, finishing by `deadline`. Errors:
  /// kUnavailable when no umad port can be opened, kTimeout when the pass
  /// did not finish in time (the caller should then end the process with
  /// _Exit, as after a fabric walk timeout: workers are left blocked).
  virtual Result<CounterPass> Read(const std::vector<CounterTarget>& targets,
                                   std::chrono::steady_clock::time_point deadline) = 0;
};

/// The real source: up to `parallel` queries in flight on one umad port,
/// matched to their answers by transaction ID.
class MadPortCounterSource : public PortCounterSource {
 public:
  explicit MadPortCounterSource(CounterQueryOptions options) : options_(std::move(options)) {}
  Result<CounterPass> Read(const std::vector<CounterTarget>& targets,
                           std::chrono::steady_clock::time_point deadline) override;

 private:
  CounterQueryOptions options_;
};

}  // namespace topolaunch
