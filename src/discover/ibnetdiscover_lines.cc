// One line of ibnetdiscover output at a time, with a cursor over a
// string_view: no regex, no allocation on the success path (a 4 MB dump is
// about 40,000 of these lines).
//
// Shapes come from infiniband-diags' ibnetdiscover.c (out_switch,
// out_switch_port, out_ca, out_ca_port) and ibsim's sim_net.c, which reads
// the same text plus a few extensions (Hca, omitted remote port, w=/s=).
#include "discover/ibnetdiscover_lines.h"

#include <algorithm>
#include <array>

namespace topolaunch::ibnet {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

Error Bad(std::string what) { return Error(ErrorCode::kBadInput, "", std::move(what)); }

struct Cursor {
  std::string_view rest;

  bool Done() const { return rest.empty(); }
  void SkipBlanks() {
    size_t n = 0;
    while (n < rest.size() && IsBlank(rest[n])) ++n;
    rest.remove_prefix(n);
  }
  bool Eat(char c) {
    if (rest.empty() || rest.front() != c) return false;
    rest.remove_prefix(1);
    return true;
  }
  bool EatWord(std::string_view word) {
    if (!rest.starts_with(word)) return false;
    rest.remove_prefix(word.size());
    return true;
  }
  // Decimal, at most 9 digits so it fits an int.
  std::optional<int> Int() {
    size_t n = 0;
    int value = 0;
    while (n < rest.size() && n < 9 && IsDigit(rest[n])) value = value * 10 + (rest[n++] - '0');
    if (n == 0 || (n < rest.size() && IsDigit(rest[n]))) return std::nullopt;
    rest.remove_prefix(n);
    return value;
  }
  // Hex digits with an optional 0x, as ParseGuid takes them.
  std::optional<Guid> Hex() {
    size_t n = rest.starts_with("0x") || rest.starts_with("0X") ? 2 : 0;
    while (n < rest.size() && IsHex(rest[n])) ++n;
    std::optional<Guid> guid = ParseGuid(rest.substr(0, n));
    if (guid) rest.remove_prefix(n);
    return guid;
  }
  std::optional<std::string_view> Quoted() {
    if (rest.empty() || rest.front() != '"') return std::nullopt;
    size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view inside = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    return inside;
  }
  std::string_view Word() {
    size_t n = 0;
    while (n < rest.size() && !IsBlank(rest[n])) ++n;
    std::string_view word = rest.substr(0, n);
    rest.remove_prefix(n);
    return word;
  }
  // "[ext 3]", printed by `ibnetdiscover -g` after a port number.
  void SkipExtPort() {
    if (rest.starts_with("[ext ")) {
      size_t close = rest.find(']');
      rest.remove_prefix(close == std::string_view::npos ? rest.size() : close + 1);
    }
  }
};

bool StartsWithWord(std::string_view line, std::string_view word) {
  return line.starts_with(word) && (line.size() == word.size() || IsBlank(line[word.size()]));
}

constexpr std::array<std::string_view, 11> kAssignmentKeys{"vendid", "devid",    "sysimgguid", "switchguid",
                                                           "caguid", "hcaguids", "rtguid",     "width",
                                                           "speed",  "module",   "pdebug"};

// The switch/CA port comment: [lid N lmc M] "peer description" lid N 4xHDR [...]
Status ParsePortComment(Cursor c, PortLine& out) {
  c.SkipBlanks();
  bool own_lid = false;
  if (c.EatWord("lid ")) {
    c.SkipBlanks();
    std::optional<int> lid = c.Int();
    if (!lid) return Bad("expected \"# lid N lmc M\" after the port");
    out.lid = *lid;
    c.SkipBlanks();
    if (c.EatWord("lmc ")) {
      c.SkipBlanks();
      if (!c.Int()) return Bad("expected a number after \"lmc\"");
    }
    c.SkipBlanks();
    own_lid = true;
  }
  if (!c.rest.starts_with('"')) {
    if (own_lid) return Bad("the port comment is cut short: expected the peer's quoted description");
    return Ok{};  // a free-form comment (hand-written ibsim files)
  }
  size_t end = c.rest.rfind("\" lid ");
  if (end == std::string_view::npos || end == 0)
    return Bad("the port comment is cut short: expected '\"description\" lid N WIDTHxSPEED'");
  c.rest.remove_prefix(end + 6);
  c.SkipBlanks();
  std::optional<int> remote_lid = c.Int();
  if (!remote_lid) return Bad("expected the peer's LID after \"lid\" in the port comment");
  out.remote_lid = *remote_lid;
  c.SkipBlanks();
  out.width_speed = c.Word();
  if (out.width_speed.empty()) return Bad("the port comment is cut short: expected a width and speed such as 4xHDR");
  return Ok{};
}

}  // namespace

LineKind ClassifyLine(std::string_view line) {
  if (line.empty()) return LineKind::kBlank;
  switch (line.front()) {
    case '#':
      return LineKind::kComment;
    case '[':  // "[12] ..."; a pasted shell prompt ("[root@host ~]# ibnetdiscover") is junk
      if (line.size() > 1 && line[1] >= '0' && line[1] <= '9') return LineKind::kPort;
      return LineKind::kOther;
    case '@':
      return LineKind::kUnsupported;
  }
  for (std::string_view type : {"Switch", "Ca", "Hca", "Rt"})
    if (StartsWithWord(line, type)) return LineKind::kRecord;
  if (size_t eq = line.find('='); eq != std::string_view::npos)
    for (std::string_view key : kAssignmentKeys)
      if (line.substr(0, eq) == key) return LineKind::kAssignment;
  if (StartsWithWord(line, "Chassis") || line.starts_with("Non-Chassis Nodes") || line.starts_with("Hostname:"))
    return LineKind::kSection;
  if (StartsWithWord(line, "do")) return LineKind::kDirective;
  if (StartsWithWord(line, "include")) return LineKind::kUnsupported;
  return LineKind::kOther;
}

Assignment SplitAssignment(std::string_view line) {
  size_t eq = line.find('=');
  Cursor c{line.substr(eq + 1)};
  return {line.substr(0, eq), c.Word()};
}

Result<GuidValue> ParseGuidValue(std::string_view value, bool with_port_guid) {
  GuidValue out;
  if (size_t open = value.find('('); with_port_guid && open != std::string_view::npos) {
    std::string_view inside = value.substr(open + 1);
    out.port_guid = inside.ends_with(')') ? ParseGuid(inside.substr(0, inside.size() - 1)) : std::nullopt;
    if (!out.port_guid) return Bad("expected a port GUID in hex between the parentheses, as in 0xGUID(PORTGUID)");
    value = value.substr(0, open);
  }
  std::optional<Guid> guid = ParseGuid(value);
  if (!guid) return Bad("expected 0x and 1-16 hex digits");
  out.guid = *guid;
  return out;
}

std::optional<std::pair<std::string, std::string>> ParseWidthSpeed(std::string_view token) {
  if (token.empty() || token.find('?') != std::string_view::npos) return std::pair<std::string, std::string>{};
  return SplitWidthSpeed(token);
}

Result<RecordLine> ParseRecordLine(std::string_view line) {
  RecordLine r;
  Cursor c{line};
  if (c.EatWord("Switch"))
    r.type = NodeType::kSwitch;
  else if (c.EatWord("Ca") || c.EatWord("Hca"))
    r.type = NodeType::kCa;
  else if (c.EatWord("Rt"))
    r.type = NodeType::kRouter;
  else
    return Bad("expected a record line starting with Switch, Ca or Rt");
  c.SkipBlanks();
  if (c.rest.starts_with(':'))
    return Bad("this is an `ibnetdiscover -l` node list, not a topology dump (run ibnetdiscover without -l/-S/-H)");
  std::optional<int> ports = c.Int();
  if (!ports || *ports < 1 || *ports > 254)
    return Bad("expected the number of ports (1-254) after the node type, as in 'Switch 36 \"S-...\"'");
  r.num_ports = *ports;
  c.SkipBlanks();
  std::optional<std::string_view> id = c.Quoted();
  if (!id || id->empty())
    return Bad("expected a quoted node id such as \"S-0002c90300a1b2c3\" (is the line cut short?)");
  r.id = *id;
  c.SkipBlanks();
  if (c.Done()) return r;
  if (!c.Eat('#')) return Bad("unexpected text after the node id; expected '# \"description\"'");
  c.SkipBlanks();
  std::string_view after;
  if (c.rest.starts_with('"')) {
    size_t last = c.rest.rfind('"');
    if (last == 0) return Bad("the node description has no closing quote (is the line cut short?)");
    r.description = c.rest.substr(1, last - 1);
    after = c.rest.substr(last + 1);
  } else {  // ibsim also accepts an unquoted description
    size_t end = c.rest.size();
    for (std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "})
      end = std::min(end, c.rest.find(stop));
    r.description = c.rest.substr(0, end);
    after = c.rest.substr(end);
  }
  if (size_t lid = after.find("lid "); lid != std::string_view::npos) {
    Cursor l{after.substr(lid + 4)};
    l.SkipBlanks();
    r.lid = l.Int().value_or(0);
  }
  return r;
}

Result<PortLine> ParsePortLine(std::string_view line) {
  PortLine p;
  Cursor c{line};
  bool open = c.Eat('[');
  std::optional<int> port = c.Int();
  if (!open || !port || !c.Eat(']')) return Bad("expected a port line such as '[12] \"S-...\"[1]'");
  p.port = *port;
  c.SkipExtPort();
  if (c.Eat('(')) {
    std::optional<Guid> guid = c.Hex();
    if (!guid || !c.Eat(')')) return Bad("expected a port GUID in hex between the parentheses after the port");
    p.port_guid = *guid;
  }
  c.SkipBlanks();
  std::optional<std::string_view> id = c.Quoted();
  if (!id || id->empty()) return Bad("expected the peer's quoted node id after the port (is the line cut short?)");
  p.remote_id = *id;
  if (c.Eat('[')) {
    std::optional<int> remote_port = c.Int();
    if (!remote_port || *remote_port < 1 || !c.Eat(']'))
      return Bad("expected the peer's port number as [N] after its id");
    p.remote_port = *remote_port;
  }
  c.SkipExtPort();
  c.SkipBlanks();
  if (c.Eat('(')) {
    std::optional<Guid> guid = c.Hex();
    if (!guid || !c.Eat(')')) return Bad("expected the peer's port GUID in hex between the parentheses");
    p.remote_port_guid = *guid;
  }
  // Between here and '#' only ibsim's link options (w=4 s=2) may stand;
  // they set what the simulator enables, not what the dump reports.
  size_t hash = c.rest.find('#');
  if (hash == std::string_view::npos) return p;
  Status comment = ParsePortComment(Cursor{c.rest.substr(hash + 1)}, p);
  if (!comment.ok()) return comment.take_error();
  return p;
}

Result<std::optional<Guid>> GuidFromNodeId(std::string_view id) {
  if (id.size() < 2 || id[1] != '-' || (id[0] != 'S' && id[0] != 'H' && id[0] != 'R')) return std::optional<Guid>{};
  std::string_view hex = id.substr(2);
  bool all_hex = !hex.empty() && hex.size() <= 16;
  for (char ch : hex) all_hex = all_hex && IsHex(ch);
  if (!all_hex)
    return Bad("bad GUID in node id \"" + std::string(id) + "\": expected 1-16 hex digits after \"" +
               std::string(id.substr(0, 2)) + "\"");
  return ParseGuid(hex);
}

bool LooksLikePortsReport(std::string_view line) {
  if (line.starts_with("DR path ")) return true;
  Cursor c{line};
  if (!(c.EatWord("CA") || c.EatWord("SW") || c.EatWord("RT"))) return false;
  c.SkipBlanks();
  if (!c.Int()) return false;  // LID
  c.SkipBlanks();
  if (!c.Int()) return false;  // port
  c.SkipBlanks();
  return c.rest.starts_with("0x");
}

}  // namespace topolaunch::ibnet
