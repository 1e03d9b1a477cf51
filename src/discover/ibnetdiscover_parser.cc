// Reading ibnetdiscover text dumps (and ibsim net files) into the fabric model.
//
// A dump is a list of records. Each record is a few key=value lines
// (vendid, devid, sysimgguid, switchguid=GUID(PORTGUID) or caguid=GUID), a
// node line (`Switch 36 "S-<guid>" # "<description>" ... lid 13 lmc 0`) and
// one line per cabled port, naming the peer by its node id and port. Both
// ends of every cable are listed, each from its own side.
//
// One pass over the lines builds the nodes and remembers, for every port,
// the peer id it names (PendingLink). A second pass resolves those ids with
// a hash map: a peer that has no record is an error (ibnetdiscover always
// prints both nodes, so a dangling id means a cut or edited file), a port
// whose peer names a different port back is an error, and a cable listed
// from one side only gets its other end made from what that side says (LID,
// port GUID, width, speed), so the model is symmetric either way.
//
// Node GUIDs: the record's *guid= line when there is one (ibsim uses it),
// else the hex in an "S-/H-/R-" id, else ibsim's own numbering for
// hand-written net files ("Switch1": switches from 0x200000, CAs from
// 0x100000), so a net file parses to the GUIDs the simulator will report.
#include "discover/ibnetdiscover_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <unordered_map>

#include "discover/ibnetdiscover_lines.h"

namespace topolaunch {

namespace {

using ibnet::LineKind;

constexpr size_t kMaxProblems = 20;

int TypeIndex(NodeType type) { return static_cast<int>(type); }

// What one port line said about its peer, resolved after all records are read.
struct PendingLink {
  size_t line = 0;
  std::string_view remote_id;
  int remote_port = 0;
  int remote_lid = 0;
  Guid remote_port_guid = 0;
  bool inferred = false;  // made from the peer's line: this side listed nothing
};

struct NodeBuild {
  FabricNode node;
  std::string_view id;
  size_t line = 0;
  Guid port_guid = 0;              // switches: shared by all their ports
  int lid = 0;                     // switches: the port 0 LID
  std::vector<PendingLink> links;  // parallel to node.ports
  std::vector<int> slot;           // port number -> index in node.ports, -1 if none
};

// The key=value lines in front of a record.
struct Header {
  size_t first_line = 0;
  Guid system_guid = 0;
  std::optional<Guid> guid[3];  // by TypeIndex
  std::optional<Guid> switch_port_guid;
};

class DumpParser {
 public:
  DumpParser(std::string_view file, size_t text_size) : file_(file) {
    nodes_.reserve(text_size / 512 + 16);
    by_id_.reserve(text_size / 512 + 16);
    by_guid_.reserve(text_size / 512 + 16);
  }

  void Line(size_t n, std::string_view line) {
    switch (ibnet::ClassifyLine(line)) {
      case LineKind::kBlank:
      case LineKind::kComment:
      case LineKind::kSection:
      case LineKind::kDirective:
        return;
      case LineKind::kAssignment:
        return OnAssignment(n, line);
      case LineKind::kRecord:
        return OnRecord(n, line);
      case LineKind::kPort:
        return OnPort(n, line);
      case LineKind::kUnsupported:
        return Report(n,
                      "ibsim's `include` and `@alias` extensions are not supported; give the whole fabric in one file");
      case LineKind::kOther:
        return OnOther(n, line);
    }
  }

  Result<Fabric> Finish() {
    if (header_.first_line)
      Report(header_.first_line,
             "these key=value lines are not followed by a Switch/Ca record (is the file cut short?)");
    if (nodes_.empty()) {
      if (ports_report_line_ && problems_.empty())
        return Error(ErrorCode::kBadInput, Where(ports_report_line_),
                     "this is an `ibnetdiscover -p` ports report, not a topology dump: "
                     "save the output of plain `ibnetdiscover` (no -p/-l/-s)");
      Report(0,
             "no Switch/Ca records found: expected ibnetdiscover's output "
             "(vendid=/devid=/switchguid= lines, then records like 'Switch 36 \"S-...\"')");
    }
    LinkPorts();
    if (!problems_.empty()) {
      if (dropped_) problems_.push_back({std::string(file_), fmt::format("... and {} more problems", dropped_)});
      return Error(ErrorCode::kBadInput, std::move(problems_));
    }
    Fabric fabric;
    fabric.source = "ibnetdiscover";
    if (junk_lines_)
      fabric.notes.push_back(fmt::format("{}: skipped {} line{} before the first record (\"{}\")",
                                         Where(first_junk_.first), junk_lines_, junk_lines_ == 1 ? "" : "s",
                                         first_junk_.second));
    fabric.nodes.reserve(nodes_.size());
    for (NodeBuild& b : nodes_) {
      if (b.node.type != NodeType::kSwitch)  // ibsim's rule for a CA port with no GUID given
        for (FabricPort& p : b.node.ports)
          if (!p.port_guid) p.port_guid = b.node.guid + p.number;
      std::sort(b.node.ports.begin(), b.node.ports.end(),
                [](const FabricPort& x, const FabricPort& y) { return x.number < y.number; });
      fabric.nodes.push_back(std::move(b.node));
    }
    return fabric;
  }

 private:
  enum class State { kBeforeFirstRecord, kBetweenRecords, kInRecord, kSkippingRecord };

  std::string Where(size_t line) const { return line ? fmt::format("{}:{}", file_, line) : std::string(file_); }

  void Report(size_t line, std::string what) {
    if (problems_.size() < kMaxProblems)
      problems_.push_back({Where(line), std::move(what)});
    else
      ++dropped_;
  }

  void OnOther(size_t n, std::string_view line) {
    if (state_ == State::kBeforeFirstRecord) {  // junk before the dump (tool warnings, a pasted prompt): tolerated
      if (!ports_report_line_ && ibnet::LooksLikePortsReport(line)) ports_report_line_ = n;
      if (!junk_lines_++) first_junk_ = {n, std::string(line.substr(0, 60))};
      return;
    }
    Report(n, fmt::format("unrecognized line \"{}\": expected a Switch/Ca record, a [port] line, "
                          "a key=value line or a # comment",
                          line.substr(0, 60)));
  }

  void OnAssignment(size_t n, std::string_view line) {
    state_ = State::kBetweenRecords;
    if (!header_.first_line) header_.first_line = n;
    auto [key, value] = ibnet::SplitAssignment(line);
    bool is_guid =
        key == "sysimgguid" || key == "switchguid" || key == "caguid" || key == "hcaguids" || key == "rtguid";
    if (!is_guid) return;  // vendid, devid and ibsim's settings do not reach the model
    Result<ibnet::GuidValue> guid = ibnet::ParseGuidValue(value, key == "switchguid");
    if (!guid) return Report(n, fmt::format("bad GUID in \"{}\": {}", line, guid.error().problems.front().what));
    if (key == "sysimgguid") {
      header_.system_guid = guid->guid;
    } else if (key == "switchguid") {
      header_.guid[TypeIndex(NodeType::kSwitch)] = guid->guid;
      header_.switch_port_guid = guid->port_guid;
    } else {
      header_.guid[TypeIndex(key == "rtguid" ? NodeType::kRouter : NodeType::kCa)] = guid->guid;
    }
  }

  void OnRecord(size_t n, std::string_view line) {
    Header header = std::exchange(header_, Header{});
    state_ = State::kSkippingRecord;  // until the record proves good
    Result<ibnet::RecordLine> rec = ibnet::ParseRecordLine(line);
    if (!rec) return Report(n, rec.error().problems.front().what);
    Result<std::optional<Guid>> id_guid = ibnet::GuidFromNodeId(rec->id);
    if (!id_guid) return Report(n, id_guid.error().problems.front().what);
    int t = TypeIndex(rec->type);
    bool is_switch = rec->type == NodeType::kSwitch;
    Guid ibsim_guid = header.guid[t].value_or(auto_guid_[t]);
    auto_guid_[t] = ibsim_guid + (is_switch ? 1 : rec->num_ports + 1);
    Guid guid = header.guid[t] ? *header.guid[t] : id_guid->value_or(ibsim_guid);
    if (auto it = by_id_.find(rec->id); it != by_id_.end())
      return Report(
          n, fmt::format("duplicate node \"{}\": already defined at {}", rec->id, Where(nodes_[it->second].line)));
    if (auto it = by_guid_.find(guid); it != by_guid_.end())
      return Report(n, fmt::format("duplicate node GUID {}: \"{}\" here and \"{}\" at {}", FormatGuid(guid), rec->id,
                                   nodes_[it->second].id, Where(nodes_[it->second].line)));
    NodeBuild& b = nodes_.emplace_back();
    b.node.type = rec->type;
    b.node.guid = guid;
    b.node.system_guid = header.system_guid;
    // ibsim describes a node without a comment by its id; so do we.
    b.node.description = std::string(rec->description.value_or(rec->id));
    b.node.num_ports = rec->num_ports;
    b.id = rec->id;
    b.line = n;
    b.lid = is_switch ? rec->lid : 0;
    b.port_guid = is_switch ? header.switch_port_guid.value_or(guid) : 0;
    b.slot.assign(rec->num_ports + 1, -1);
    by_id_.emplace(b.id, nodes_.size() - 1);
    by_guid_.emplace(guid, nodes_.size() - 1);
    state_ = State::kInRecord;
  }

  void OnPort(size_t n, std::string_view line) {
    if (state_ == State::kSkippingRecord) return;  // its record was already reported
    if (state_ != State::kInRecord)
      return Report(n, "port line outside a record: port lines must follow their Switch/Ca line");
    Result<ibnet::PortLine> p = ibnet::ParsePortLine(line);
    if (!p) return Report(n, p.error().problems.front().what);
    NodeBuild& b = nodes_.back();
    if (p->port < 1 || p->port > b.node.num_ports)
      return Report(n, fmt::format("port {} is out of range: \"{}\" has {} ports", p->port, b.id, b.node.num_ports));
    if (int s = b.slot[p->port]; s >= 0)
      return Report(
          n, fmt::format("port {} of \"{}\" is listed twice (first at {})", p->port, b.id, Where(b.links[s].line)));
    FabricPort port;
    port.number = p->port;
    bool is_switch = b.node.type == NodeType::kSwitch;
    port.port_guid = is_switch ? b.port_guid : p->port_guid;
    port.lid = is_switch ? b.lid : p->lid;
    auto width_speed = ibnet::ParseWidthSpeed(p->width_speed);
    if (!width_speed)
      return Report(
          n, fmt::format("bad link width/speed \"{}\": expected e.g. 4xHDR (is the line cut short?)", p->width_speed));
    std::tie(port.width, port.speed) = std::move(*width_speed);
    b.slot[p->port] = static_cast<int>(b.node.ports.size());
    b.node.ports.push_back(std::move(port));
    b.links.push_back({n, p->remote_id, p->remote_port, p->remote_lid, p->remote_port_guid, false});
  }

  void LinkPorts() {
    for (size_t i = 0; i < nodes_.size(); ++i)
      for (size_t k = 0; k < nodes_[i].links.size(); ++k)  // may grow: self-cables
        if (!nodes_[i].links[k].inferred) LinkOne(i, k);
  }

  void LinkOne(size_t i, size_t k) {
    const PendingLink link = nodes_[i].links[k];  // a copy: the vectors may grow below
    NodeBuild& a = nodes_[i];
    int a_port = a.node.ports[k].number;
    auto it = by_id_.find(link.remote_id);
    if (it == by_id_.end()) {
      Result<std::optional<Guid>> g = ibnet::GuidFromNodeId(link.remote_id);
      std::string guid = g && *g ? FormatGuid(**g) : std::string("unknown");
      return Report(link.line, fmt::format("port {} of \"{}\" is cabled to \"{}\" (GUID {}), which has no record in "
                                           "this file: ibnetdiscover lists both ends, so the dump is incomplete",
                                           a_port, a.id, link.remote_id, guid));
    }
    NodeBuild& b = nodes_[it->second];  // may be `a` itself (a loop-back cable)
    if (link.remote_port > b.node.num_ports)
      return Report(link.line, fmt::format("port {} of \"{}\" is cabled to port {} of \"{}\", which has only {} ports",
                                           a_port, a.id, link.remote_port, b.id, b.node.num_ports));
    a.node.ports[k].remote = PortRef{b.node.guid, link.remote_port};
    if (int s = b.slot[link.remote_port]; s >= 0) {
      const PendingLink& back = b.links[s];
      if (back.remote_id != a.id || back.remote_port != a_port)
        return Report(link.line, fmt::format("port {} of \"{}\" is cabled to port {} of \"{}\", which {} cables to "
                                             "port {} of \"{}\" instead",
                                             a_port, a.id, link.remote_port, b.id, Where(back.line), back.remote_port,
                                             back.remote_id));
      FabricPort& theirs = b.node.ports[s];
      if (!theirs.lid) theirs.lid = link.remote_lid;
      if (!theirs.port_guid) theirs.port_guid = link.remote_port_guid;
      return;
    }
    FabricPort peer;  // the cable is listed from a's side only: make b's end
    peer.number = link.remote_port;
    bool b_switch = b.node.type == NodeType::kSwitch;
    peer.port_guid = b_switch ? b.port_guid : link.remote_port_guid;
    peer.lid = b_switch ? b.lid : link.remote_lid;
    peer.width = a.node.ports[k].width;
    peer.speed = a.node.ports[k].speed;
    peer.remote = PortRef{a.node.guid, a_port};
    std::string_view a_id = a.id;
    b.slot[link.remote_port] = static_cast<int>(b.node.ports.size());
    b.node.ports.push_back(std::move(peer));
    b.links.push_back({link.line, a_id, a_port, 0, 0, true});
  }

  std::string_view file_;
  std::vector<Problem> problems_;
  size_t dropped_ = 0;
  std::vector<NodeBuild> nodes_;
  std::unordered_map<std::string_view, size_t> by_id_;
  std::unordered_map<Guid, size_t> by_guid_;
  Header header_;
  Guid auto_guid_[3] = {0x100000, 0x200000, 0};  // ibsim's first CA, switch, router GUIDs
  State state_ = State::kBeforeFirstRecord;
  size_t ports_report_line_ = 0;
  size_t junk_lines_ = 0;
  std::pair<size_t, std::string> first_junk_;  // line number, first 60 bytes
};

}  // namespace

Result<Fabric> ParseIbnetdiscover(std::string_view text, std::string_view file_name) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (text.substr(0, 4096).find('\0') != std::string_view::npos)
    return Error(ErrorCode::kBadInput, std::string(file_name),
                 "binary data, not an ibnetdiscover text dump (a cache file from `ibnetdiscover --cache`?)");
  DumpParser parser(file_name, text.size());
  for (size_t n = 1; !text.empty(); ++n) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    parser.Line(n, line);
  }
  return parser.Finish();
}

}  // namespace topolaunch
