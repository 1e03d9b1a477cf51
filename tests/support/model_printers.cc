#include "support/model_printers.h"

#include <fmt/format.h>

#include "topolaunch/topology_json.h"

namespace topolaunch {

void PrintTo(const Topology& value, std::ostream* os) { *os << FormatTopologyJson(value); }

void PrintTo(const TopologySwitch& s, std::ostream* os) {
  *os << fmt::format("{{{} \"{}\" level {} ports {}}}", FormatGuid(s.guid), s.name, s.level, s.ports);
}

void PrintTo(const HcaAttachment& a, std::ostream* os) {
  *os << fmt::format("{{{} port {} \"{}\" -> {}[{}] {}{} }}", FormatGuid(a.guid), a.port, a.description,
                     a.switch_guid ? FormatGuid(*a.switch_guid) : "none", a.switch_port.value_or(-1), a.width, a.speed);
}

void PrintTo(const TopologyHost& h, std::ostream* os) {
  *os << "{" << h.name << ":";
  for (const HcaAttachment& a : h.hcas) PrintTo(a, os);
  *os << (h.layout ? " +layout}" : "}");
}

void PrintTo(const TopologyLink& l, std::ostream* os) {
  *os << fmt::format("{{{}[{}] - {}[{}] {} {} {}}}", FormatGuid(l.from.node_guid), l.from.port,
                     FormatGuid(l.to.node_guid), l.to.port, l.width, l.speed, l.state);
}

void PrintTo(const UnmappedCa& u, std::ostream* os) {
  *os << fmt::format("{{{} \"{}\": {}}}", FormatGuid(u.guid), u.description, u.reason);
}

}  // namespace topolaunch
