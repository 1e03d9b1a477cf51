#include "discover/live_fabric_readers.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include <fmt/format.h>

namespace topolaunch::testing {

namespace {

std::string TrimRight(std::string text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.pop_back();
  return text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(TrimRight(line));
  return lines;
}

Guid Hex(const std::string& text) { return ParseGuid(text).value_or(0); }

// "key=value" from a probe line; "" when absent.
std::string Field(const std::string& line, const std::string& key) {
  size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  size_t start = at + key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

bool ReadProbeNode(const std::string& line, Fabric& fabric) {
  static const std::regex re(R"re(^node (0x[0-9a-f]{16}) (\w+) ports=(\d+) sysguid=(0x[0-9a-f]{16}) desc="(.*)"$)re");
  std::smatch m;
  if (!std::regex_match(line, m, re)) return false;
  FabricNode node;
  node.guid = Hex(m[1]);
  node.type = m[2] == "Switch" ? NodeType::kSwitch : m[2] == "Router" ? NodeType::kRouter : NodeType::kCa;
  node.num_ports = std::stoi(m[3]);
  node.system_guid = Hex(m[4]);
  node.description = m[5];
  fabric.nodes.push_back(node);
  return true;
}

bool ReadProbePort(const std::string& line, Fabric& fabric) {
  static const std::regex re(R"(^port (0x[0-9a-f]{16}) (\d+) .*$)");
  std::smatch m;
  if (!std::regex_match(line, m, re) || fabric.nodes.empty() || fabric.nodes.back().guid != Hex(m[1])) return false;
  FabricPort port;
  port.number = std::stoi(m[2]);
  port.port_guid = Hex(Field(line, "guid"));
  port.lid = std::stoi("0" + Field(line, "lid"));
  port.width = Field(line, "width");
  port.speed = Field(line, "speed");
  port.state = Field(line, "state");
  std::string remote = Field(line, "remote");
  if (size_t colon = remote.find(':'); colon != std::string::npos)
    port.remote = PortRef{Hex(remote.substr(0, colon)), std::stoi(remote.substr(colon + 1))};
  fabric.nodes.back().ports.push_back(port);
  return true;
}

}  // namespace

ProbeOutput ReadProbeOutput(const std::string& text) {
  ProbeOutput out;
  Fabric fabric;
  for (const std::string& line : Lines(text)) {
    if (line.rfind("error ", 0) == 0) out.error_code = line.substr(6);
    else if (line.rfind("source ", 0) == 0) fabric.source = line.substr(7);
    else if (!ReadProbeNode(line, fabric) && !ReadProbePort(line, fabric)) out.bad_lines.push_back(line);
  }
  if (out.error_code.empty()) out.fabric = std::move(fabric);
  return out;
}

int OracleFabric::Count(const std::string& type) const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.second.type == type; }));
}

OracleFabric ReadIbnetdiscoverOutput(const std::string& text) {
  static const std::regex node_re(R"re(^(Switch|Ca|Rt)\s+(\d+)\s+"[SHR]-([0-9a-f]+)"\s+#\s+"(.*)".*$)re");
  static const std::regex port_re(
      R"re(^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-f]+)\))?\s+"[SHR]-([0-9a-f]+)"\[(\d+)\].*\s(\d+)x([A-Z0-9?]+)$)re");
  static const std::regex sys_re(R"(^sysimgguid=(0x[0-9a-f]+)$)");
  OracleFabric oracle;
  Guid current = 0, system_guid = 0;
  std::smatch m;
  for (const std::string& line : Lines(text)) {
    if (std::regex_match(line, m, sys_re)) {
      system_guid = Hex(m[1]);
    } else if (std::regex_match(line, m, node_re)) {
      current = Hex(m[3]);
      // The description is the first quoted string after '#'.
      std::string desc = m[4];
      if (m[1] == "Switch") desc = desc.substr(0, desc.find('"'));
      oracle.nodes[current] = OracleNode{m[1], std::stoi(m[2]), system_guid, TrimRight(desc)};
    } else if (std::regex_match(line, m, port_re)) {
      PortRef here{current, std::stoi(m[1])};
      std::string speed = m[6];
      oracle.links[here] = OracleLink{{Hex(m[3]), std::stoi(m[4])}, std::string(m[5]) + "X", speed == "???" ? "" : speed};
      if (m[2].matched) oracle.ca_port_guids[here] = Hex(m[2]);
    } else if (!line.empty() && line[0] == '[') {
      oracle.bad_lines.push_back(line);
    }
  }
  return oracle;
}

std::vector<std::string> CompareWithOracle(const Fabric& live, const OracleFabric& oracle) {
  std::vector<std::string> diffs;
  auto add = [&](std::string d) { diffs.push_back(std::move(d)); };
  for (const auto& [guid, expected] : oracle.nodes)
    if (!live.FindNode(guid)) add(fmt::format("node {} ({}) missing from the live walk", FormatGuid(guid), expected.description));
  int live_links = 0;
  for (const FabricNode& node : live.nodes) {
    auto it = oracle.nodes.find(node.guid);
    if (it == oracle.nodes.end()) {
      add(fmt::format("node {} not in ibnetdiscover's output", FormatGuid(node.guid)));
      continue;
    }
    const OracleNode& want = it->second;
    std::string type = node.type == NodeType::kRouter ? "Rt" : std::string(NodeTypeName(node.type));
    if (type != want.type) add(fmt::format("{}: type {} vs {}", FormatGuid(node.guid), type, want.type));
    if (node.num_ports != want.num_ports) add(fmt::format("{}: {} ports vs {}", FormatGuid(node.guid), node.num_ports, want.num_ports));
    if (node.system_guid != want.system_guid) add(fmt::format("{}: sysimgguid differs", FormatGuid(node.guid)));
    if (node.description != want.description)
      add(fmt::format("{}: description '{}' vs '{}'", FormatGuid(node.guid), node.description, want.description));
    for (const FabricPort& port : node.ports) {
      PortRef here{node.guid, port.number};
      if (auto g = oracle.ca_port_guids.find(here); g != oracle.ca_port_guids.end() && g->second != port.port_guid)
        add(fmt::format("{}[{}]: port guid {} vs {}", FormatGuid(node.guid), port.number, FormatGuid(port.port_guid), FormatGuid(g->second)));
      if (!port.remote) continue;
      ++live_links;
      OracleLink got{*port.remote, port.width, port.speed};
      auto link = oracle.links.find(here);
      if (link == oracle.links.end())
        add(fmt::format("{}[{}]: live link not printed by ibnetdiscover", FormatGuid(node.guid), port.number));
      else if (!(link->second == got))
        add(fmt::format("{}[{}]: live {}[{}] {}{} vs ibnetdiscover {}[{}] {}{}", FormatGuid(node.guid), port.number,
                        FormatGuid(got.remote.node_guid), got.remote.port, got.width, got.speed,
                        FormatGuid(link->second.remote.node_guid), link->second.remote.port, link->second.width, link->second.speed));
    }
  }
  if (live_links != static_cast<int>(oracle.links.size()))
    add(fmt::format("{} linked ports live vs {} printed by ibnetdiscover", live_links, oracle.links.size()));
  return diffs;
}

std::vector<std::string> CompareFabrics(const Fabric& a, const Fabric& b, bool fdr10_reads_as_qdr) {
  std::vector<std::string> diffs;
  if (a.nodes.size() != b.nodes.size()) diffs.push_back(fmt::format("{} nodes vs {}", a.nodes.size(), b.nodes.size()));
  for (const FabricNode& x : a.nodes) {
    const FabricNode* y = b.FindNode(x.guid);
    std::string id = FormatGuid(x.guid);
    if (!y) {
      diffs.push_back(id + ": missing");
      continue;
    }
    if (x.type != y->type || x.system_guid != y->system_guid || x.description != y->description || x.num_ports != y->num_ports)
      diffs.push_back(id + ": node fields differ");
    if (x.ports.size() != y->ports.size()) diffs.push_back(fmt::format("{}: {} ports vs {}", id, x.ports.size(), y->ports.size()));
    for (const FabricPort& p : x.ports) {
      const FabricPort* q = y->FindPort(p.number);
      bool speed_ok = q && (p.speed == q->speed || (fdr10_reads_as_qdr && p.speed == "FDR10" && q->speed == "QDR"));
      if (!q || !speed_ok || p.port_guid != q->port_guid || p.lid != q->lid || p.width != q->width || p.state != q->state ||
          p.remote != q->remote)
        diffs.push_back(fmt::format("{}[{}]: port differs ({} {} {} vs {})", id, p.number, p.width, p.speed, p.state,
                                    q ? q->width + " " + q->speed + " " + q->state : "missing"));
    }
  }
  return diffs;
}

std::string FirstLines(const std::vector<std::string>& lines, size_t max) {
  std::string text;
  for (size_t i = 0; i < lines.size() && i < max; ++i) text += lines[i] + "\n";
  if (lines.size() > max) text += fmt::format("... and {} more\n", lines.size() - max);
  return text;
}

}  // namespace topolaunch::testing
