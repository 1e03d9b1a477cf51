// The rule set: one rule per variable, each deciding a value and a one-line
// reason from the facts, or leaving the variable to NCCL's own default (and
// saying why). Templates choose which rules run ("NAME=@rule").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "env/env_facts.h"

namespace topolaunch {

/// A rule's answer. An empty `value` leaves the variable unset; `reason`
/// then says why (shown by --explain).
struct RuleOutcome {
  std::string value;
  std::string reason;
  /// Something the user should fix, printed as a warning ("" when none).
  std::string warning;
};

/// What a rule sees: the facts and the fabric the profile is for.
struct RuleInput {
  const EnvFacts& facts;
  FabricKind fabric;
};

using RuleFunction = RuleOutcome (*)(const RuleInput& input);

struct EnvRule {
  std::string_view name;  ///< the variable it decides; on the real-names list
  RuleFunction decide;
};

/// Every rule, by variable name. Static storage.
std::span<const EnvRule> EnvRules();

/// The rule for `name`, or nullptr.
const EnvRule* FindEnvRule(std::string_view name);

// The rules themselves (env_rules.cc, env_rules_fabric.cc), exposed for tests.
RuleOutcome DecideIbHca(const RuleInput& input);
RuleOutcome DecideCrossNic(const RuleInput& input);
RuleOutcome DecideGidIndex(const RuleInput& input);
RuleOutcome DecideSocketIfname(const RuleInput& input);
/// On TCP: the interfaces as fast as `routed` (for DecideSocketIfname's
/// reason), "" when there are none or speeds are unknown.
std::string AlikeInterfacesNote(const EnvFacts& facts, const std::string& routed);
RuleOutcome DecideTopoFile(const RuleInput& input);
RuleOutcome DecideCudaDeviceOrder(const RuleInput& input);
RuleOutcome DecideTorchAsyncErrorHandling(const RuleInput& input);
/// Never set: says whether the fabric has SHARP aggregation nodes CollNet
/// could use, and what CollNet needs besides.
RuleOutcome DecideCollNet(const RuleInput& input);
/// Never set: says which NVLink domain the host is in (NCCL's default
/// detects and uses it), or what keeps its GPUs out of one.
RuleOutcome DecideMnnvl(const RuleInput& input);

/// The RoCE v2 / IPv4 GID index of `port`, or nullopt: the lowest-index
/// populated entry of type "RoCE v2" whose GID is IPv4-mapped
/// (::ffff:a.b.c.d), which is also what NCCL >= 2.21 picks by itself.
std::optional<GidEntry> RoceV2Ipv4Gid(const RdmaPort& port);

}  // namespace topolaunch
