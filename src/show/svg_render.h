// A Drawing as SVG: one group per switch, host, box and wire, each with its
// details as an SVG <title> (the tooltip any viewer shows on hover) and data-*
// attributes that the HTML page and the tests read back.
#pragma once

#include <string>
#include <string_view>

#include "show/fabric_drawing.h"

namespace topolaunch {

/// The standalone SVG document (XML declaration first, a newline last). The
/// root element, <svg class="fabric">, declares the drawing's counts
/// (data-switches, data-hosts, data-cables, data-cables-not-drawn,
/// data-nodes) for the page's consistency check. Same drawing, same bytes.
std::string RenderSvg(const Drawing& drawing);

/// The <svg> element alone, to inline in HTML.
std::string RenderSvgElement(const Drawing& drawing);

/// `text` safe as XML character data and attribute values: & < > " '
/// escaped; control characters other than tab and newline, and bytes that
/// are not UTF-8, become U+FFFD (XML 1.0 allows neither).
std::string XmlText(std::string_view text);

}  // namespace topolaunch
