// Which links run below what they should.
//
// Two independent rules, because neither is enough alone. The "could be"
// rule of iblinkinfo compares a link's active width and speed with the best
// both ends support; it is exact on honest hardware, but ibsim (and some
// firmware) advertise 12X on every port, so it would flag every link. The
// peer rule compares a link with the other links of the same kind (host
// links, switch-to-switch links) at the same switch: a 1X or EDR link among
// 4X HDR peers is degraded whatever the ports claim. A switch-to-switch
// link must be below the majority at both of its switches, so a cable
// between an HDR and an FDR switch, normal at the FDR end, is not flagged.
//
// A link the peer rule flags is an error (with the capability reason added
// when it applies too). A link only the capability rule flags is a warning,
// unless most links of its kind fall short the same way: then the fabric as
// a whole runs that way and one info finding says so, instead of thousands.
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "audit/audit_fabric_checks.h"
#include "audit/audit_port_naming.h"

namespace topolaunch {

namespace {

// Lane count of a width name; 0 when unknown.
double WidthRank(std::string_view width) { return LinkRateGbps(width, "SDR").value_or(0); }
// Per-lane rate of a speed name; 0 when unknown.
double SpeedRank(std::string_view speed) { return LinkRateGbps("1X", speed).value_or(0); }

struct Link {
  const FabricNode* a = nullptr;
  const FabricPort* pa = nullptr;
  const FabricNode* b = nullptr;
  const FabricPort* pb = nullptr;
  bool host_link = false;  // one end is a CA
};

std::vector<Link> ActiveLinks(const Fabric& fabric) {
  std::vector<Link> links;
  for (const FabricNode& node : fabric.nodes)
    for (const FabricPort& port : node.ports) {
      if (!port.remote || port.width.empty() || port.state == "Down") continue;
      PortRef self{node.guid, port.number};
      if (!(self < *port.remote)) continue;  // each cable once
      const FabricNode* peer = fabric.FindNode(port.remote->node_guid);
      const FabricPort* pp = peer ? peer->FindPort(port.remote->port) : nullptr;
      if (!pp) continue;
      links.push_back({&node, &port, peer, pp, node.type != NodeType::kSwitch || peer->type != NodeType::kSwitch});
    }
  return links;
}

// The value held by more than half of `counts` (at least 2 links), if any.
std::optional<std::string> Majority(const std::map<std::string, int>& counts) {
  int total = 0;
  for (const auto& [value, n] : counts) total += n;
  for (const auto& [value, n] : counts)
    if (n >= 2 && 2 * n > total) return value;
  return std::nullopt;
}

// Per (switch, kind): how many links run at each width and each speed.
struct Tally {
  std::map<std::string, int> widths, speeds;
};
using TallyKey = std::pair<Guid, bool>;

// Below the majority of its kind at every switch end (none: no verdict).
std::optional<std::string> BelowPeers(const Link& l, const std::map<TallyKey, Tally>& tallies, bool width) {
  std::optional<std::string> verdict;
  for (const FabricNode* end : {l.a, l.b}) {
    if (end->type != NodeType::kSwitch) continue;
    const Tally& t = tallies.at({end->guid, l.host_link});
    std::optional<std::string> major = Majority(width ? t.widths : t.speeds);
    const std::string& mine = width ? l.pa->width : l.pa->speed;
    double (*rank)(std::string_view) = width ? WidthRank : SpeedRank;
    if (!major || rank(*major) <= rank(mine)) return std::nullopt;
    verdict = fmt::format("runs {} while most {} links at {} run {}", mine, l.host_link ? "host" : "switch-to-switch",
                          end->description, *major);
  }
  return verdict;
}

// Below what both ends support: "4X, both ends support 12X".
std::optional<std::string> BelowCapability(const Link& l, bool width) {
  const std::string& sa = width ? l.pa->supported_width : l.pa->supported_speed;
  const std::string& sb = width ? l.pb->supported_width : l.pb->supported_speed;
  double (*rank)(std::string_view) = width ? WidthRank : SpeedRank;
  if (rank(sa) == 0 || rank(sb) == 0) return std::nullopt;
  const std::string& common = rank(sa) <= rank(sb) ? sa : sb;
  const std::string& mine = width ? l.pa->width : l.pa->speed;
  if (rank(mine) >= rank(common)) return std::nullopt;
  return fmt::format("runs {} although both ends support {} (iblinkinfo: could be {})", mine, common, common);
}

struct Pending {
  Finding finding;
  bool peer_rule = false;
};

}  // namespace

std::vector<Finding> CheckLinkRates(const Fabric& fabric, const Topology& topology) {
  PortNaming naming(topology);
  std::vector<Link> links = ActiveLinks(fabric);
  std::map<TallyKey, Tally> tallies;
  for (const Link& l : links)
    for (const FabricNode* end : {l.a, l.b})
      if (end->type == NodeType::kSwitch) {
        Tally& t = tallies[{end->guid, l.host_link}];
        ++t.widths[l.pa->width];
        ++t.speeds[l.pa->speed];
      }
  std::vector<Finding> out;
  for (bool width : {true, false}) {
    std::map<bool, int> judged, short_of_capability;  // by kind
    std::map<bool, std::vector<Finding>> capability_only;
    std::map<bool, std::string> example;
    for (const Link& l : links) {
      std::optional<std::string> peer = BelowPeers(l, tallies, width);
      std::optional<std::string> cap = BelowCapability(l, width);
      bool known = WidthRank(l.pa->supported_width) > 0 && WidthRank(l.pb->supported_width) > 0;
      if (known) ++judged[l.host_link];
      if (cap) ++short_of_capability[l.host_link], example[l.host_link] = *cap;
      if (!peer && !cap) continue;
      Finding f = naming.ForLink({l.a->guid, l.pa->number}, {l.b->guid, l.pb->number});
      f.check = width ? "link_width" : "link_speed";
      f.severity = peer ? Severity::kError : Severity::kWarning;
      f.message = fmt::format("link {} <-> {} runs {} {} ({})", naming.Describe({l.a->guid, l.pa->number}),
                              naming.Describe({l.b->guid, l.pb->number}), l.pa->width, l.pa->speed,
                              width ? "narrower than it should" : "slower than it should");
      if (peer) f.reasons.push_back("peer majority: " + *peer);
      if (cap) f.reasons.push_back("capability: " + *cap);
      (peer ? out : capability_only[l.host_link]).push_back(std::move(f));
    }
    for (bool host_link : {true, false}) {
      int n = short_of_capability[host_link];
      if (n > 0 && 2 * n > judged[host_link]) {
        Finding f;
        f.severity = Severity::kInfo;
        f.check = width ? "link_width" : "link_speed";
        f.message = fmt::format("{} of {} {} links run below what both ends support; the whole fabric runs so, "
                                "so no single link is flagged by this rule", n, judged[host_link],
                                host_link ? "host" : "switch-to-switch");
        f.reasons.push_back("capability (example): " + example[host_link]);
        out.push_back(std::move(f));
      } else {
        for (Finding& f : capability_only[host_link]) out.push_back(std::move(f));
      }
    }
  }
  return out;
}

}  // namespace topolaunch
