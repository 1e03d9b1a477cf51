// Port error counters: their names, the thresholds they are judged against
// (infiniband-diags' error_thresholds format), and the judging.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/audit_findings.h"
#include "audit/audit_port_naming.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// PortCounters names as infiniband-diags spell them, with their bit widths
/// (a counter at its maximum has saturated: it no longer counts).
struct CounterInfo {
  std::string_view name;
  int bits;
  std::string_view sysfs_name;  ///< the file under .../ports/N/counters/
};
/// The error counters the audit reads, in PortCounters order.
const std::vector<CounterInfo>& ErrorCounters();
/// The entry for `name`, or nullptr.
const CounterInfo* FindCounter(std::string_view name);

/// Counter name -> the highest value (or increase, with an interval) that is
/// still healthy.
using CounterThresholds = std::map<std::string, std::uint64_t, std::less<>>;

/// infiniband-diags' defaults (the values commented in its error_thresholds
/// file: 10 for symbol, recovery, downed, receive, link-integrity and
/// overrun errors; 100 for the rest).
CounterThresholds DefaultCounterThresholds();

/// Parses an error_thresholds file: `Name=value` lines, '#' comments, blank
/// lines. Names not given keep `base`'s values. Every bad line (unknown
/// name, not a number, no '=') is reported as `file_name:line`.
Result<CounterThresholds> ParseCounterThresholds(std::string_view text, std::string_view file_name,
                                                 CounterThresholds base);

/// Counter name -> value, as read from one port.
using CounterValues = std::map<std::string, std::uint64_t, std::less<>>;

/// Why these counters are unhealthy, one reason per counter above its
/// threshold; empty when healthy. With `before` (the first of two samples
/// `interval_s` apart) the increase is judged instead of the value.
std::vector<std::string> CounterReasons(const CounterValues& values, const CounterValues* before, double interval_s,
                                        const CounterThresholds& thresholds);

/// One port's counters as read (name -> value).
struct CounterSample {
  PortRef port;
  std::optional<PortRef> remote;  ///< for naming the cable
  CounterValues values;
};

/// port_counter findings (error): counters above their threshold. With
/// `interval_s` > 0, `before` holds the first sample of each port and the
/// increase over the interval is judged (old counters saturate instead of
/// wrapping, so their absolute value says little); a saturated counter is
/// named as such either way.
std::vector<Finding> JudgeCounters(const std::vector<CounterSample>& after, const std::vector<CounterSample>& before,
                                   double interval_s, const CounterThresholds& thresholds, const PortNaming& naming);

}  // namespace topolaunch
