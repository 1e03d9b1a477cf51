// A Drawing as one self-contained HTML page: the SVG inline, a search box,
// a details panel for whatever is clicked, leaf boxes that expand into their
// hosts, and a check that counts what the page drew. No external fetch.
#pragma once

#include <string>

#include "show/fabric_drawing.h"

namespace topolaunch {

/// The page. Its script counts the switches, hosts (drawn and boxed) and
/// cables in the SVG, compares them with what the SVG declares, and puts
/// "ok: drawn S switches, H hosts (B in boxes), C cables | TITLE" (or
/// "MISMATCH: ...") in the document title, for people and for tests.
std::string RenderHtml(const Drawing& drawing);

}  // namespace topolaunch
