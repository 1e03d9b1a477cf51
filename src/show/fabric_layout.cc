// Where everything goes in the picture.
//
// Switch levels are rows, the highest on top: an admin reads a fat tree the
// way it is drawn in every vendor's cabling plan. Leaves are ordered by the
// groups they belong to (rankmap/fabric_groups.h), highest level first, so a
// pod's leaves sit together and the cables between a pod and its spines stay
// short; then by natural name. Each leaf is a column: the leaf on top, its
// hosts below in a grid of at most kHostCols, or one counted box when the
// fabric is too big to draw host by host. A host sits under the leaf of its
// first rail (where the plan counts it), with one wire per cabled HCA port,
// so a rail-optimised host shows a wire to each of its rail leaves.
//
// A switch above the leaves is placed over the mean of the switches one level
// down it is cabled to (the barycentre heuristic of layered graph drawing),
// pushed right where it would overlap its neighbour. Nothing depends on hash
// order or on the clock, so the same topology always gives the same picture.
//
// Wires stand for every cable between two shapes: parallel cables between two
// switches are one wire, wider, with their count; in the expanded picture each
// HCA port of a host is a wire of its own. A wire's colour is the rate of its
// slowest cable; one that is not Active is dashed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/hostlist.h"
#include "discover/slurm_switch_names.h"
#include "rankmap/fabric_groups.h"
#include "show/drawing_index.h"

namespace topolaunch {

namespace {

constexpr int kMargin = 20, kLabelW = 78;
constexpr int kSwitchW = 104, kSwitchH = 32, kSwitchGap = 14;
constexpr int kHostW = 80, kHostH = 34, kHostGap = 6, kHostCols = 8;
constexpr int kBoxW = 124, kBoxH = 52;
constexpr int kCaW = 168, kCaH = 40;
constexpr int kColGap = 28, kRowGap = 96, kHostsBelowLeaf = 80, kAreaGap = 56;

// Colours for link rates, fastest first; slower rates past the list share its last.
constexpr std::string_view kRatePalette[] = {"#1f4e9c", "#2a9d8f", "#8a5cc2", "#d4a017", "#8d6e63", "#5f6b7a"};
constexpr std::string_view kUnknownRateColor = "#9e9e9e";

struct Column {
  const TopologySwitch* leaf = nullptr;  // none: the hosts off the fabric
  std::vector<const TopologyHost*> hosts;
  std::vector<std::string> extra;    // names only (a plan's hosts the topology lacks)
  int x = 0, w = 0;
};

bool NameLess(const TopologySwitch* a, const TopologySwitch* b) {
  if (a->name != b->name) return NaturalLess(a->name, b->name);
  return a->guid < b->guid;
}

std::string RateName(const TopologyLink& link) {
  std::optional<double> gbps = LinkRateGbps(link.width, link.speed);
  if (!gbps) return link.width.empty() && link.speed.empty() ? "rate unknown" : fmt::format("{} {}", link.width, link.speed);
  return fmt::format("{} {} {:g} Gb/s", link.width, link.speed, *gbps);
}

class Layout {
 public:
  Layout(const Topology& t, bool collapse, DrawingIndex& index) : t_(t), collapse_(collapse), index_(index) {}

  Drawing Run(const std::vector<std::string>& extra_hosts) {
    d_.collapsed = collapse_;
    groups_ = ComputeFabricGroups(t_);
    for (const TopologySwitch& s : t_.switches) switch_by_guid_.emplace(s.guid, &s), ++name_count_[s.name];
    for (const TopologySwitch& s : t_.switches) top_level_ = std::max(top_level_, s.level);
    BuildColumns(extra_hosts);
    PlaceColumns();
    PlaceUpperLevels();
    int bottom = PlaceHostsAndBoxes();
    bottom = PlaceUnmapped(bottom);
    bottom = PlaceLevelZero(bottom);
    DrawWires();
    d_.counts.switches = static_cast<int>(t_.switches.size());
    d_.counts.hosts = static_cast<int>(t_.hosts.size() + extra_count_);
    d_.counts.hosts_not_in_topology = static_cast<int>(extra_count_);
    d_.counts.cables = static_cast<int>(t_.links.size());
    for (const Shape& s : d_.shapes) d_.width = std::max(d_.width, s.x + s.w + kMargin);
    d_.height = bottom + kMargin;
    return std::move(d_);
  }

 private:
  const TopologySwitch* FindSwitch(Guid guid) const {
    auto s = switch_by_guid_.find(guid);
    return s == switch_by_guid_.end() ? nullptr : s->second;
  }

  int RowY(int level) const { return kMargin + (top_level_ - level) * kRowGap; }

  void BuildColumns(const std::vector<std::string>& extra_hosts) {
    std::map<Guid, size_t> column_of;
    std::vector<const TopologySwitch*> leaves;
    for (const TopologySwitch& s : t_.switches)
      if (s.level == 1) leaves.push_back(&s);
    // A leaf's groups, from its first host; leaves of no host go last.
    std::map<Guid, std::vector<int>> leaf_key;
    for (const TopologyHost& h : t_.hosts) {
      auto place = groups_.hosts.find(h.name);
      if (place == groups_.hosts.end()) continue;
      std::vector<int> key(place->second.groups.rbegin(), place->second.groups.rend());
      leaf_key.emplace(place->second.rail0_leaf, std::move(key));
    }
    std::stable_sort(leaves.begin(), leaves.end(), [&](const TopologySwitch* a, const TopologySwitch* b) {
      auto ka = leaf_key.find(a->guid), kb = leaf_key.find(b->guid);
      bool ha = ka != leaf_key.end(), hb = kb != leaf_key.end();
      if (ha != hb) return ha;
      if (ha && ka->second != kb->second) return ka->second < kb->second;
      return NameLess(a, b);
    });
    for (const TopologySwitch* leaf : leaves) {
      column_of[leaf->guid] = columns_.size();
      columns_.push_back({leaf, {}, {}, 0, 0});
    }
    Column off;
    for (const TopologyHost& h : t_.hosts) {
      auto place = groups_.hosts.find(h.name);
      auto col = place == groups_.hosts.end() ? column_of.end() : column_of.find(place->second.rail0_leaf);
      if (col == column_of.end()) off.hosts.push_back(&h);
      else columns_[col->second].hosts.push_back(&h);
    }
    off.extra = extra_hosts;
    extra_count_ = extra_hosts.size();
    if (!off.hosts.empty() || !off.extra.empty()) columns_.push_back(std::move(off));
  }

  int ColumnWidth(const Column& c) const {
    int n = static_cast<int>(c.hosts.size() + c.extra.size());
    int hosts_w = collapse_ ? kBoxW : std::min(n, kHostCols) * (kHostW + kHostGap) - kHostGap;
    return std::max(c.leaf ? kSwitchW : 0, hosts_w);
  }

  void PlaceColumns() {
    int x = kMargin + kLabelW;
    for (Column& c : columns_) {
      if (!c.leaf) x += kAreaGap - kColGap;
      c.x = x, c.w = ColumnWidth(c);
      x += c.w + kColGap;
      if (c.leaf) AddSwitch(*c.leaf, c.x + (c.w - kSwitchW) / 2, RowY(1));
    }
    if (top_level_ >= 1) AddCaption(kMargin, RowY(1) + kSwitchH / 2 + 4, "leaf");
  }

  // Each level from 2 up, over the mean of the switches below it.
  void PlaceUpperLevels() {
    std::map<Guid, std::vector<Guid>> neighbours;
    for (const TopologyLink& l : t_.links) {
      neighbours[l.from.node_guid].push_back(l.to.node_guid);
      neighbours[l.to.node_guid].push_back(l.from.node_guid);
    }
    for (int level = 2; level <= top_level_; ++level) {
      std::vector<std::pair<double, const TopologySwitch*>> row;
      for (const TopologySwitch& s : t_.switches) {
        if (s.level != level) continue;
        double sum = 0;
        int n = 0;
        for (Guid g : neighbours[s.guid]) {
          const TopologySwitch* below = FindSwitch(g);
          if (!below || below->level != level - 1) continue;
          const Shape& shape = d_.shapes[index_.switch_shape.at(g)];
          sum += shape.x + shape.w / 2.0;
          ++n;
        }
        row.emplace_back(n ? sum / n : std::numeric_limits<double>::infinity(), &s);
      }
      std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return NameLess(a.second, b.second);
      });
      // Pushed right where they would overlap, then the row moved back left
      // (not past the margin) so that on average it sits over its centres.
      int cursor = kMargin + kLabelW;
      std::vector<int> xs;
      double want = 0, got = 0;
      int placed = 0;
      for (const auto& [centre, s] : row) {
        int x = std::isinf(centre) ? cursor : std::max(cursor, static_cast<int>(std::lround(centre)) - kSwitchW / 2);
        if (!std::isinf(centre)) want += centre, got += x + kSwitchW / 2.0, ++placed;
        xs.push_back(x);
        cursor = x + kSwitchW + kSwitchGap;
      }
      int back = placed ? static_cast<int>(std::lround((got - want) / placed)) : 0;
      if (!xs.empty()) back = std::clamp(back, 0, xs.front() - (kMargin + kLabelW));
      for (size_t i = 0; i < row.size(); ++i) AddSwitch(*row[i].second, xs[i] - back, RowY(level));
      if (!row.empty()) AddCaption(kMargin, RowY(level) + kSwitchH / 2 + 4, fmt::format("level {}", level));
    }
  }

  int PlaceHostsAndBoxes() {
    int top = (top_level_ >= 1 ? RowY(1) : kMargin) + kHostsBelowLeaf;
    int bottom = top;
    for (const Column& c : columns_) {
      if (!c.leaf) AddCaption(c.x, top - 8, "off the fabric");
      if (collapse_) {
        if (c.hosts.empty() && c.extra.empty()) continue;
        AddBox(c, top);
        bottom = std::max(bottom, top + kBoxH);
        continue;
      }
      int i = 0;
      auto next = [&] {
        int x = c.x + (i % kHostCols) * (kHostW + kHostGap), y = top + (i / kHostCols) * (kHostH + kHostGap);
        bottom = std::max(bottom, y + kHostH);
        ++i;
        return std::pair{x, y};
      };
      for (const TopologyHost* h : c.hosts) {
        auto [x, y] = next();
        AddHost(h->name, h, x, y);
      }
      for (const std::string& name : c.extra) {
        auto [x, y] = next();
        AddHost(name, nullptr, x, y);
      }
    }
    if (!t_.hosts.empty() || extra_count_) AddCaption(kMargin, top + 20, collapse_ ? "hosts (boxes)" : "hosts");
    return bottom;
  }

  int PlaceUnmapped(int bottom) {
    std::map<std::string, std::vector<const UnmappedCa*>> by_reason;
    for (const UnmappedCa& u : t_.unmapped) by_reason[u.reason].push_back(&u);
    if (by_reason.empty()) return bottom;
    int y = bottom + kAreaGap, x = kMargin + kLabelW;
    AddCaption(x, y - 8, "CAs that name no host");
    for (const auto& [reason, cas] : by_reason) {
      Shape s;
      s.kind = ShapeKind::kUnmappedGroup;
      s.id = fmt::format("u{}", unmapped_ids_++);
      s.name = reason;
      s.lines = {fmt::format("{} CA{}", cas.size(), cas.size() == 1 ? "" : "s"), ShortText(reason, 26)};
      s.x = x, s.y = y, s.w = kCaW, s.h = kCaH;
      s.fill = "#f3f3f3";
      s.details.push_back(fmt::format("{} CA(s) not taken as hosts: {}", cas.size(), reason));
      for (size_t i = 0; i < cas.size() && i < 20; ++i)
        s.details.push_back(fmt::format("{} \"{}\"", FormatGuid(cas[i]->guid), cas[i]->description));
      if (cas.size() > 20) s.details.push_back(fmt::format("... and {} more", cas.size() - 20));
      for (const UnmappedCa* u : cas) ca_shape_[u->guid] = d_.shapes.size();
      d_.shapes.push_back(std::move(s));
      x += kCaW + kColGap;
    }
    return y + kCaH;
  }

  int PlaceLevelZero(int bottom) {
    std::vector<const TopologySwitch*> zero;
    for (const TopologySwitch& s : t_.switches)
      if (s.level == 0) zero.push_back(&s);
    if (zero.empty()) return bottom;
    std::stable_sort(zero.begin(), zero.end(), NameLess);
    int y = bottom + kAreaGap, x = kMargin + kLabelW;
    AddCaption(x, y - 8, "switches with no path to a host");
    for (const TopologySwitch* s : zero) {
      AddSwitch(*s, x, y);
      x += kSwitchW + kSwitchGap;
    }
    return y + kSwitchH;
  }

  void AddCaption(int x, int y, std::string text) { d_.captions.push_back({x, y, std::move(text)}); }

  void AddSwitch(const TopologySwitch& s, int x, int y) {
    Shape shape;
    shape.kind = ShapeKind::kSwitch;
    shape.id = fmt::format("s{}", switch_ids_++);
    shape.name = s.name;
    // Managed switches describe themselves as "MF0;NAME:MODEL/U1": NAME is what admins call them.
    std::string short_name = SlurmSwitchBaseName(s.name);
    shape.lines = {ShortText(short_name.empty() ? s.name : short_name, 15)};
    // Switches that all say "Quantum Mellanox Technologies" are told apart by their GUIDs.
    if (name_count_[s.name] > 1) shape.lines.push_back(fmt::format("..{:06x}", s.guid & 0xFFFFFF));
    shape.x = x, shape.y = y, shape.w = kSwitchW, shape.h = kSwitchH;
    shape.fill = s.level == 1 ? "#e8eef8" : s.level == 0 ? "#f5f5f5" : "#dde4f0";
    shape.details = {fmt::format("switch {}", s.name), fmt::format("GUID {}", FormatGuid(s.guid)),
                     s.level == 0 ? "level 0: no path to a host" : fmt::format("level {}{}", s.level, s.level == 1 ? " (leaf)" : ""),
                     fmt::format("{} ports", s.ports)};
    index_.switch_shape[s.guid] = d_.shapes.size();
    d_.shapes.push_back(std::move(shape));
  }

  void AddHost(const std::string& name, const TopologyHost* h, int x, int y) {
    Shape shape;
    shape.kind = ShapeKind::kHost;
    shape.id = fmt::format("h{}", host_ids_++);
    shape.name = name;
    shape.lines = {ShortText(name, 11)};
    shape.x = x, shape.y = y, shape.w = kHostW, shape.h = kHostH;
    shape.hosts = 1;
    shape.details.push_back(fmt::format("host {}", name));
    if (!h) shape.details.push_back("not in the topology (named by the plan)");
    for (const HcaAttachment& a : h ? h->hcas : std::vector<HcaAttachment>{}) {
      std::string peer = "not cabled";
      if (a.switch_guid) {
        const TopologySwitch* s = FindSwitch(*a.switch_guid);
        peer = fmt::format("{} port {}", s ? s->name : FormatGuid(*a.switch_guid), a.switch_port.value_or(0));
      }
      shape.details.push_back(fmt::format("{} port {}: {} {} -> {}", a.device.empty() ? FormatGuid(a.guid) : a.device, a.port,
                                          a.width, a.speed, peer));
    }
    if (h && h->layout) shape.details.push_back(fmt::format("{} GPU(s), {} NIC(s) in its layout", h->layout->gpus.size(), h->layout->nics.size()));
    index_.host_shape[name] = d_.shapes.size();
    d_.shapes.push_back(std::move(shape));
  }

  void AddBox(const Column& c, int y) {
    Shape shape;
    shape.kind = c.leaf ? ShapeKind::kLeafBox : ShapeKind::kOffFabricBox;
    shape.id = fmt::format("b{}", box_ids_++);
    shape.x = c.x + (c.w - kBoxW) / 2, shape.y = y, shape.w = kBoxW, shape.h = kBoxH;
    shape.fill = "#f7f7f2";
    std::vector<std::string> names;
    for (const TopologyHost* h : c.hosts) names.push_back(h->name);
    names.insert(names.end(), c.extra.begin(), c.extra.end());
    shape.hosts = static_cast<int>(names.size());
    shape.name = c.leaf ? c.leaf->name : "off the fabric";
    shape.lines = {fmt::format("{} host{}", names.size(), names.size() == 1 ? "" : "s")};
    shape.details = {fmt::format("{}: {} host(s)", c.leaf ? "under leaf " + shape.name : shape.name, names.size()),
                     ShortText(CompressHostList(names), 200)};
    for (const std::string& n : names) {
      shape.boxed.push_back({n, -1, std::nullopt});
      index_.host_shape[n] = d_.shapes.size();
    }
    d_.shapes.push_back(std::move(shape));
  }

  // The shape a cable end is drawn at, and for a host in the expanded
  // picture the port's slot (so each HCA port is its own wire).
  std::optional<std::pair<size_t, int>> EndShape(const PortRef& end) {
    if (auto s = index_.switch_shape.find(end.node_guid); s != index_.switch_shape.end()) return std::pair{s->second, 0};
    if (auto u = ca_shape_.find(end.node_guid); u != ca_shape_.end()) return std::pair{u->second, 0};
    auto host = host_of_ca_.find(end.node_guid);
    if (host == host_of_ca_.end()) return std::nullopt;
    size_t shape = index_.host_shape.at(host->second->name);
    if (collapse_) return std::pair{shape, 0};
    const std::vector<HcaAttachment>& hcas = host->second->hcas;
    ports_of_shape_[shape] = static_cast<int>(hcas.size());
    for (size_t k = 0; k < hcas.size(); ++k)
      if (hcas[k].guid == end.node_guid && hcas[k].port == end.port) return std::pair{shape, static_cast<int>(k) + 1};
    return std::pair{shape, 0};
  }

  std::pair<int, int> Anchor(size_t shape, int slot, size_t other_shape) {
    const Shape &s = d_.shapes[shape], &other = d_.shapes[other_shape];
    int x = s.x + s.w / 2;
    int ports = slot > 0 ? ports_of_shape_.at(shape) : 0;
    if (slot > 0) x = s.x + slot * s.w / (ports + 1);
    return {x, s.y > other.y || s.y == other.y ? s.y : s.y + s.h};
  }

  void DrawWires() {
    for (const TopologyHost& h : t_.hosts)
      for (const HcaAttachment& a : h.hcas) host_of_ca_.emplace(a.guid, &h);
    // Rates, fastest first, for the palette and the legend.
    std::map<double, std::map<std::string, int>, std::greater<>> rates;
    int unknown_rate = 0;
    using Key = std::tuple<size_t, int, size_t, int>;
    std::map<Key, std::vector<const TopologyLink*>> wires;
    for (const TopologyLink& l : t_.links) {
      auto a = EndShape(l.from), b = EndShape(l.to);
      if (!a || !b) {
        ++d_.counts.cables_not_drawn;
        continue;
      }
      if (std::tie(a->first, a->second) > std::tie(b->first, b->second)) std::swap(a, b);
      wires[Key{a->first, a->second, b->first, b->second}].push_back(&l);
      if (auto gbps = LinkRateGbps(l.width, l.speed)) ++rates[*gbps][RateName(l)];
      else ++unknown_rate;
    }
    std::map<double, std::string_view> color;
    size_t n = 0;
    for (const auto& [gbps, names] : rates) color[gbps] = kRatePalette[std::min(n++, std::size(kRatePalette) - 1)];
    for (const auto& [key, links] : wires) {
      const auto& [sa, pa, sb, pb] = key;
      const Shape &a = d_.shapes[sa], &b = d_.shapes[sb];
      bool a_lower = a.y >= b.y;
      Wire w;
      w.id = fmt::format("l{}", d_.wires.size());
      w.from = a_lower ? a.id : b.id, w.to = a_lower ? b.id : a.id;
      auto [x1, y1] = Anchor(a_lower ? sa : sb, a_lower ? pa : pb, a_lower ? sb : sa);
      auto [x2, y2] = Anchor(a_lower ? sb : sa, a_lower ? pb : pa, a_lower ? sa : sb);
      w.x1 = x1, w.y1 = y1, w.x2 = x2, w.y2 = y2;
      w.arc = a.y == b.y;
      w.cables = static_cast<int>(links.size());
      w.width_tenths = 12 + 8 * static_cast<int>(std::floor(std::log2(links.size())));
      std::optional<double> slowest;
      std::map<std::string, int> kinds;
      for (const TopologyLink* l : links) {
        auto gbps = LinkRateGbps(l->width, l->speed);
        if (gbps && (!slowest || *gbps < *slowest)) slowest = gbps;
        ++kinds[RateName(*l) + (l->state.empty() || l->state == "Active" ? "" : ", " + l->state)];
        if (!l->state.empty() && l->state != "Active") w.down = true;
        index_.end_wire[l->from] = d_.wires.size();
        index_.end_wire[l->to] = d_.wires.size();
      }
      if (w.down) ++down_;
      w.color = slowest ? std::string(color[*slowest]) : std::string(kUnknownRateColor);
      w.details.push_back(fmt::format("{} <-> {}: {} cable{}", EndName(a), EndName(b), links.size(), links.size() == 1 ? "" : "s"));
      for (const auto& [kind, count] : kinds) w.details.push_back(fmt::format("{} x {}", count, kind));
      d_.wires.push_back(std::move(w));
    }
    AddRateLegend(rates, color, unknown_rate);
  }

  // What a wire's tooltip calls its end: a box stands for hosts, not its leaf.
  static std::string EndName(const Shape& s) {
    if (s.kind == ShapeKind::kLeafBox) return "the hosts under " + s.name;
    if (s.kind == ShapeKind::kOffFabricBox) return "the hosts off the fabric";
    if (s.kind == ShapeKind::kUnmappedGroup) return "CAs: " + s.name;
    return s.name;
  }

  void AddRateLegend(const std::map<double, std::map<std::string, int>, std::greater<>>& rates,
                     std::map<double, std::string_view>& color, int unknown_rate) {
    d_.legend.push_back({fmt::format("{} switch{} in {} level{}, {} host{}, {} cable{}{}", t_.switches.size(),
                                     t_.switches.size() == 1 ? "" : "es", top_level_, top_level_ == 1 ? "" : "s",
                                     t_.hosts.size(), t_.hosts.size() == 1 ? "" : "s", t_.links.size(),
                                     t_.links.size() == 1 ? "" : "s",
                                     collapse_ ? "; each leaf's hosts in one box" : ""),
                         "", false});
    for (const auto& [gbps, names] : rates) {
      int total = 0;
      std::string kinds;
      for (const auto& [name, count] : names) {
        total += count;
        kinds += (kinds.empty() ? "" : ", ") + name;
      }
      d_.legend.push_back({fmt::format("{} cable{}: {}", total, total == 1 ? "" : "s", kinds), std::string(color[gbps]), false});
    }
    if (unknown_rate) d_.legend.push_back({fmt::format("{} cable(s) of unknown rate", unknown_rate), std::string(kUnknownRateColor), false});
    if (down_) d_.legend.push_back({fmt::format("{} wire(s) with a cable not Active (dashed)", down_), "#555555", true});
    if (d_.counts.cables_not_drawn)
      d_.legend.push_back({fmt::format("{} cable(s) to nodes the topology does not model (routers), not drawn", d_.counts.cables_not_drawn), "", false});
  }

  const Topology& t_;
  bool collapse_;
  DrawingIndex& index_;
  Drawing d_;
  FabricGroups groups_;
  int top_level_ = 0;
  std::vector<Column> columns_;
  size_t extra_count_ = 0;
  int switch_ids_ = 0, host_ids_ = 0, box_ids_ = 0, unmapped_ids_ = 0;
  std::map<Guid, size_t> ca_shape_;
  std::unordered_map<Guid, const TopologyHost*> host_of_ca_;
  std::unordered_map<Guid, const TopologySwitch*> switch_by_guid_;
  std::unordered_map<size_t, int> ports_of_shape_;
  std::unordered_map<std::string, int> name_count_;
  int down_ = 0;
};

}  // namespace

Drawing LayOutFabric(const Topology& topology, const std::vector<std::string>& extra_hosts, bool collapse,
                     DrawingIndex& index) {
  return Layout(topology, collapse, index).Run(extra_hosts);
}

}  // namespace topolaunch
