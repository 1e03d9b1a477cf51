// Judging port error counters against error_thresholds.
//
// Without an interval the counters' values since they were last cleared are
// compared with the thresholds, as ibqueryerrors does. With one, only what
// the counters gained between two samples counts, which tells a port that is
// erroring now from one that erred last month; the increase per second is
// reported too. A counter stuck at its maximum has saturated and is named
// so, since its value is then a lower bound.
#include "audit/audit_counters.h"

#include <charconv>

#include <fmt/format.h>

namespace topolaunch {

const std::vector<CounterInfo>& ErrorCounters() {
  static const std::vector<CounterInfo> kCounters = {
      {"SymbolErrorCounter", 16, "symbol_error"},
      {"LinkErrorRecoveryCounter", 8, "link_error_recovery"},
      {"LinkDownedCounter", 8, "link_downed"},
      {"PortRcvErrors", 16, "port_rcv_errors"},
      {"PortRcvRemotePhysicalErrors", 16, "port_rcv_remote_physical_errors"},
      {"PortRcvSwitchRelayErrors", 16, "port_rcv_switch_relay_errors"},
      {"PortXmitDiscards", 16, "port_xmit_discards"},
      {"PortXmitConstraintErrors", 8, "port_xmit_constraint_errors"},
      {"PortRcvConstraintErrors", 8, "port_rcv_constraint_errors"},
      {"LocalLinkIntegrityErrors", 4, "local_link_integrity_errors"},
      {"ExcessiveBufferOverrunErrors", 4, "excessive_buffer_overrun_errors"},
      {"VL15Dropped", 16, "VL15_dropped"},
      {"PortXmitWait", 32, "port_xmit_wait"},
  };
  return kCounters;
}

const CounterInfo* FindCounter(std::string_view name) {
  for (const CounterInfo& c : ErrorCounters())
    if (c.name == name) return &c;
  return nullptr;
}

CounterThresholds DefaultCounterThresholds() {
  // PortXmitWait counts congestion, not errors: judged only when a
  // thresholds file names it.
  return {{"SymbolErrorCounter", 10},        {"LinkErrorRecoveryCounter", 10},
          {"LinkDownedCounter", 10},         {"PortRcvErrors", 10},
          {"PortRcvRemotePhysicalErrors", 100}, {"PortRcvSwitchRelayErrors", 100},
          {"PortXmitDiscards", 100},         {"PortXmitConstraintErrors", 100},
          {"PortRcvConstraintErrors", 100},  {"LocalLinkIntegrityErrors", 10},
          {"ExcessiveBufferOverrunErrors", 10}, {"VL15Dropped", 100}};
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<CounterThresholds> ParseCounterThresholds(std::string_view text, std::string_view file_name,
                                                 CounterThresholds base) {
  std::vector<Problem> problems;
  int line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    std::string where = fmt::format("{}:{}", file_name, line_number);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      problems.push_back({where, fmt::format("expected Name=value, got \"{}\"", line)});
      continue;
    }
    std::string_view name = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    if (!FindCounter(name)) {
      problems.push_back({where, fmt::format("unknown counter \"{}\" (expected one of SymbolErrorCounter, "
                                             "LinkErrorRecoveryCounter, ..., VL15Dropped, PortXmitWait)", name)});
      continue;
    }
    std::uint64_t number = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
      problems.push_back({where, fmt::format("threshold for {} must be a non-negative integer, got \"{}\"", name, value)});
      continue;
    }
    base[std::string(name)] = number;
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return base;
}

std::vector<std::string> CounterReasons(const CounterValues& values, const CounterValues* before, double interval_s,
                                        const CounterThresholds& thresholds) {
  std::vector<std::string> reasons;
  for (const auto& [name, value] : values) {
    auto limit = thresholds.find(name);
    const CounterInfo* info = FindCounter(name);
    if (limit == thresholds.end() || !info) continue;
    bool saturated = info->bits < 64 && value >= (std::uint64_t{1} << info->bits) - 1;
    std::uint64_t judged = value;
    if (before) {
      auto old = before->find(name);
      judged = old != before->end() && old->second <= value ? value - old->second : value;
    }
    if (judged <= limit->second) continue;
    std::string reason = before ? fmt::format("{} rose by {} in {:g} s ({:.1f}/s), threshold {}", name, judged,
                                              interval_s, judged / interval_s, limit->second)
                                : fmt::format("{}={} above threshold {}", name, value, limit->second);
    if (saturated) reason += " (saturated: the true count is higher)";
    reasons.push_back(std::move(reason));
  }
  return reasons;
}

std::vector<Finding> JudgeCounters(const std::vector<CounterSample>& after, const std::vector<CounterSample>& before,
                                   double interval_s, const CounterThresholds& thresholds, const PortNaming& naming) {
  std::map<PortRef, const CounterSample*> first;
  for (const CounterSample& s : before) first[s.port] = &s;
  std::vector<Finding> out;
  for (const CounterSample& sample : after) {
    const CounterValues* earlier = nullptr;
    if (interval_s > 0) {
      auto it = first.find(sample.port);
      if (it == first.end()) continue;  // no first sample: nothing to judge
      earlier = &it->second->values;
    }
    std::vector<std::string> reasons = CounterReasons(sample.values, earlier, interval_s, thresholds);
    if (reasons.empty()) continue;
    Finding f = naming.ForPort(sample.port, sample.remote);
    f.check = "port_counter";
    f.severity = Severity::kError;
    f.message = fmt::format("error counters of {} above threshold", naming.Describe(sample.port));
    f.reasons = std::move(reasons);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace topolaunch
