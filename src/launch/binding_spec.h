// The bindings of one node's local ranks as one environment value, so that
// `topolaunch bind` (started by torchrun for each worker) can apply its own
// local rank's binding without a file or a second connection:
//
//   TOPOLAUNCH_BINDINGS="0-15/0;16-31/0;32-47/1;48-63/1"
//
// Entry i is local rank i: CPUS (a cpulist, "0-3,8-11") '/' NUMA node; an
// empty part is unbound ("/0" memory only, "0-7/" CPUs only, "" neither).
// Pure.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "launch/command.h"
#include "topolaunch/plan.h"
#include "topolaunch/result.h"

namespace topolaunch {

inline constexpr std::string_view kBindingsEnvName = "TOPOLAUNCH_BINDINGS";

/// One local rank's binding as `bind` needs it.
struct BindingEntry {
  std::vector<int> cpus;     ///< empty: CPUs not bound
  std::optional<int> numa;   ///< memory node; nullopt: not bound
  bool operator==(const BindingEntry&) const = default;
};

/// The value for kBindingsEnvName.
std::string FormatBindingSpec(std::span<const RankBinding> ranks);

/// Parses it. Errors: kBadInput naming kBindingsEnvName and the entry.
Result<std::vector<BindingEntry>> ParseBindingSpec(std::string_view text);

/// What `bind` execs for `local_rank`: `numactl --physcpubind=.. --membind=.. --
/// PROGRAM ARGS` when the entry binds something and `numactl` (a path) is
/// given, else the program itself. Errors: kBadInput when local_rank has no
/// entry, kBadUsage for an empty program.
Result<Command> BoundCommand(std::span<const BindingEntry> entries, int local_rank,
                             const std::vector<std::string>& program, const std::string& numactl);

/// True when the entry binds CPUs or memory, i.e. BoundCommand needs numactl.
bool BindsSomething(const BindingEntry& entry);

}  // namespace topolaunch
