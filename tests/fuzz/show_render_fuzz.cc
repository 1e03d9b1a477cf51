// `show` on any topology.json the validating reader accepts: every cable is
// drawn or counted, every host is drawn or boxed, and the SVG holds no byte
// XML 1.0 forbids (node descriptions are the fabric's, any bytes).
#include "fuzz/fuzz_check.h"
#include "show/fabric_drawing.h"
#include "show/html_page.h"
#include "show/svg_render.h"
#include "topolaunch/topology_json.h"

namespace {

void CheckDrawing(const topolaunch::Topology& t, const topolaunch::Drawing& d) {
  using namespace topolaunch;
  int cables = 0, hosts = 0, switches = 0;
  for (const Wire& w : d.wires) cables += w.cables;
  for (const Shape& s : d.shapes) {
    if (s.kind == ShapeKind::kHost || s.kind == ShapeKind::kLeafBox || s.kind == ShapeKind::kOffFabricBox) hosts += s.hosts;
    switches += s.kind == ShapeKind::kSwitch;
  }
  fuzz::Check(cables + d.counts.cables_not_drawn == static_cast<int>(t.links.size()), "every cable drawn or counted");
  fuzz::Check(hosts == static_cast<int>(t.hosts.size()), "every host drawn or boxed");
  fuzz::Check(switches == static_cast<int>(t.switches.size()), "every switch drawn");
  std::string svg = RenderSvg(d);
  for (char c : svg) fuzz::Check(static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t', "no control byte in the SVG");
  fuzz::Check(RenderHtml(d).find("<script>alert") == std::string::npos, "no markup from the input");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  Result<Topology> topology = ParseTopologyJson(fuzz::AsText(data, size), "fuzz.json");
  if (!topology.ok()) return 0;
  CheckDrawing(*topology, DrawFabric(*topology, nullptr, nullptr, {}));
  CheckDrawing(*topology, DrawFabric(*topology, nullptr, nullptr, DrawOptions{0}));
  return 0;
}
