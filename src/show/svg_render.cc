#include "show/svg_render.h"

#include <fmt/format.h>

#include "core/json_text.h"
#include "show/drawing_index.h"

namespace topolaunch {

namespace {

constexpr std::string_view kReplacement = "\uFFFD";

// Whether the valid UTF-8 sequence of `n` bytes at `s[i]` is a character
// XML 1.0 forbids: a C0 control other than tab and newline, DEL, U+FFFE, U+FFFF.
bool ForbiddenInXml(std::string_view s, size_t i, size_t n) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (n == 1) return (byte(i) < 0x20 && byte(i) != '\t' && byte(i) != '\n') || byte(i) == 0x7F;
  return n == 3 && byte(i) == 0xEF && byte(i + 1) == 0xBF && (byte(i + 2) == 0xBE || byte(i + 2) == 0xBF);
}

// Length of the sequence `lead` starts, in text known to be valid UTF-8.
size_t SequenceLength(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

std::string_view MarkName(PlanMark mark) {
  switch (mark) {
    case PlanMark::kNone: return "";
    case PlanMark::kPlanned: return "planned";
    case PlanMark::kSkipped: return "skipped";
    case PlanMark::kSpare: return "spare";
    case PlanMark::kNotPlanned: return "unplanned";
  }
  return "";
}

void AppendLegend(const Drawing& d, std::string& out) {
  out += "<g class=\"legend\">\n";
  int y = 22;
  for (const LegendLine& l : d.legend) {
    if (!l.swatch.empty() && l.dashed)
      out += fmt::format("<line x1=\"20\" y1=\"{0}\" x2=\"40\" y2=\"{0}\" stroke=\"{1}\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>", y - 4,
                         XmlText(l.swatch));
    else if (!l.swatch.empty())
      out += fmt::format("<rect x=\"20\" y=\"{}\" width=\"20\" height=\"10\" fill=\"{}\"/>", y - 9, XmlText(l.swatch));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", l.swatch.empty() ? 20 : 48, y, XmlText(l.text));
    y += 17;
  }
  out += "</g>\n";
}

void AppendWire(const Wire& w, std::string& out) {
  std::string path = w.arc ? fmt::format("M{} {} Q{} {} {} {}", w.x1, w.y1, (w.x1 + w.x2) / 2, std::min(w.y1, w.y2) - 40, w.x2, w.y2)
                           : fmt::format("M{} {} L{} {}", w.x1, w.y1, w.x2, w.y2);
  out += fmt::format("<g class=\"wire\" id=\"{}\" data-from=\"{}\" data-to=\"{}\" data-cables=\"{}\"{}>", w.id, w.from, w.to,
                     w.cables, w.worst ? fmt::format(" data-severity=\"{}\"", SeverityName(*w.worst)) : "");
  if (w.worst)
    out += fmt::format("<path d=\"{}\" stroke=\"{}\" stroke-width=\"{}.{}\" stroke-opacity=\"0.55\" fill=\"none\"/>", path,
                       SeverityColor(*w.worst), w.width_tenths / 10 + 4, w.width_tenths % 10);
  out += fmt::format("<path d=\"{}\" stroke=\"{}\" stroke-width=\"{}.{}\" fill=\"none\"{}/>", path, w.color, w.width_tenths / 10,
                     w.width_tenths % 10, w.down ? " stroke-dasharray=\"5 4\"" : "");
  out += fmt::format("<title>{}</title></g>\n", XmlText(Joined(w.details)));
}

void AppendShape(const Shape& s, std::string& out) {
  out += fmt::format("<g class=\"{}\" id=\"{}\" data-name=\"{}\"", ShapeClass(s.kind), s.id, XmlText(s.name));
  if (s.kind == ShapeKind::kLeafBox || s.kind == ShapeKind::kOffFabricBox || s.kind == ShapeKind::kHost)
    out += fmt::format(" data-hosts=\"{}\"", s.hosts);
  if (s.node_rank >= 0) out += fmt::format(" data-rank=\"{}\"", s.node_rank);
  if (s.mark != PlanMark::kNone) out += fmt::format(" data-mark=\"{}\"", MarkName(s.mark));
  if (s.worst) out += fmt::format(" data-severity=\"{}\"", SeverityName(*s.worst));
  out += ">";
  std::string stroke = s.worst ? std::string(SeverityColor(*s.worst)) : "#5b6b7f";
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
                     s.x, s.y, s.w, s.h, s.mark == PlanMark::kSkipped ? "url(#hatch)" : XmlText(s.fill), stroke,
                     s.worst ? 3 : 1, s.mark == PlanMark::kSpare ? " stroke-dasharray=\"4 3\"" : "");
  int line_y = s.y + (s.h - 12 * static_cast<int>(s.lines.size())) / 2 + 10;
  for (const std::string& line : s.lines) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\"{}>{}</text>", s.x + s.w / 2, line_y,
                       s.mark == PlanMark::kNotPlanned ? " fill-opacity=\"0.55\"" : "", XmlText(line));
    line_y += 12;
  }
  out += fmt::format("<title>{}</title></g>\n", XmlText(Joined(s.details)));
}

void AppendRing(const Drawing& d, std::string& out) {
  if (d.ring.empty()) return;
  std::string points;
  for (const auto& [x, y] : d.ring) points += fmt::format("{}{},{}", points.empty() ? "" : " ", x, y);
  if (d.ring.size() > 1) points += fmt::format(" {},{}", d.ring.front().first, d.ring.front().second);
  out += fmt::format(
      "<g class=\"ring\" pointer-events=\"none\" data-stops=\"{}\"><polyline points=\"{}\" fill=\"none\" stroke=\"#222222\" "
      "stroke-width=\"2\" stroke-opacity=\"0.4\" stroke-linejoin=\"round\" marker-mid=\"url(#step)\"/>"
      "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#222222\"/></g>\n",
      d.ring.size(), points, d.ring.front().first, d.ring.front().second);
}

}  // namespace

std::string XmlText(std::string_view text) {
  // Bytes that are not UTF-8 become U+FFFD first (core/json_text.h), then
  // what XML forbids does too, a U+FFFD a byte as for those.
  std::string valid = ToValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size();) {
    size_t n = SequenceLength(static_cast<unsigned char>(valid[i]));
    if (ForbiddenInXml(valid, i, n)) {
      for (size_t k = 0; k < n; ++k) out += kReplacement;
    } else if (n > 1) {
      out.append(valid, i, n);
    } else {
      switch (valid[i]) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += valid[i];
      }
    }
    i += n;
  }
  return out;
}

std::string RenderSvgElement(const Drawing& d) {
  std::string out;
  out.reserve(4096 + d.shapes.size() * 420 + d.wires.size() * 260);
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fabric\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\" data-switches=\"{2}\" data-hosts=\"{3}\" "
      "data-cables=\"{4}\" data-cables-not-drawn=\"{5}\" data-nodes=\"{6}\" data-collapsed=\"{7}\">\n",
      d.width, d.height, d.counts.switches, d.counts.hosts, d.counts.cables, d.counts.cables_not_drawn, d.counts.nodes,
      d.collapsed ? 1 : 0);
  out += fmt::format("<title>{}</title>\n", XmlText(d.title));
  out += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9a9a9a\" "
         "stroke-width=\"2\"/></pattern><marker id=\"step\" viewBox=\"0 0 6 6\" refX=\"3\" refY=\"3\" markerWidth=\"4\" "
         "markerHeight=\"4\"><circle cx=\"3\" cy=\"3\" r=\"3\" fill=\"#222222\"/></marker></defs>\n";
  out += fmt::format("<rect class=\"background\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", d.width, d.height);
  AppendLegend(d, out);
  out += "<g class=\"captions\" fill=\"#555555\">\n";
  for (const Caption& c : d.captions) out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", c.x, c.y, XmlText(c.text));
  out += "</g>\n<g class=\"wires\">\n";
  for (const Wire& w : d.wires) AppendWire(w, out);
  out += "</g>\n<g class=\"shapes\">\n";
  for (const Shape& s : d.shapes) AppendShape(s, out);
  out += "</g>\n";
  AppendRing(d, out);
  out += "</svg>\n";
  return out;
}

std::string RenderSvg(const Drawing& drawing) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + RenderSvgElement(drawing);
}

}  // namespace topolaunch
