#include "show/html_page.h"

#include <nlohmann/json.hpp>

#include "show/svg_render.h"

namespace topolaunch {

namespace {

constexpr std::string_view kStyle = R"(
body { margin: 0; font: 13px "DejaVu Sans", Helvetica, Arial, sans-serif; color: #222; }
#bar { position: sticky; top: 0; z-index: 2; background: #f4f6f9; border-bottom: 1px solid #ccd; padding: 6px 10px; }
#bar input { width: 18em; }
#found { margin-left: 1em; color: #555; }
#details { position: fixed; right: 10px; top: 44px; max-width: 36em; max-height: 70vh; overflow: auto; background: #fff;
           border: 1px solid #99a; padding: 6px 10px; white-space: pre-wrap; font-family: monospace; display: none; z-index: 3; }
#canvas { overflow: auto; }
svg.fabric.fit { width: 100%; height: auto; }
g.switch, g.host, g.leafbox, g.offfabric, g.unmapped, g.wire { cursor: pointer; }
g.switch:hover rect, g.host:hover rect, g.leafbox:hover rect, g.offfabric:hover rect, g.unmapped:hover rect { stroke-width: 3; }
g.wire:hover path { stroke-width: 5; }
g.hit rect { stroke: #000 !important; stroke-width: 4 !important; }
g.expanded rect.entry.hit { stroke: #000; stroke-width: 3; }
)";

// Counting, details, search, expanding boxes. Plain ES2017, no library.
constexpr std::string_view kScript = R"(
(function () {
  const svg = document.querySelector('svg.fabric');
  const boxes = JSON.parse(document.getElementById('boxes').textContent);
  const details = document.getElementById('details');
  const found = document.getElementById('found');
  const NS = 'http://www.w3.org/2000/svg';
  // The page's own check: what is drawn against what the drawing declares.
  const count = (sel) => svg.querySelectorAll(sel).length;
  let boxed = 0, cables = 0;
  svg.querySelectorAll('g.leafbox, g.offfabric').forEach((g) => { boxed += Number(g.dataset.hosts); });
  svg.querySelectorAll('g.wire').forEach((g) => { cables += Number(g.dataset.cables); });
  const switches = count('g.switch'), hosts = count('g.host') + boxed;
  const ok = switches === Number(svg.dataset.switches) && hosts === Number(svg.dataset.hosts) &&
             cables + Number(svg.dataset.cablesNotDrawn) === Number(svg.dataset.cables);
  document.title = (ok ? 'ok' : 'MISMATCH') + ': drawn ' + switches + ' switches, ' + hosts + ' hosts (' + boxed +
                   ' in boxes), ' + cables + ' cables | ' + document.title;
  const nodes = Number(svg.dataset.nodes);
  const rankColor = (r) => 'hsl(' + (nodes > 1 ? 220 - Math.trunc(220 * r / (nodes - 1)) : 220) + ',60%,78%)';
  const sevColor = { info: '#1e88e5', warning: '#f59e0b', error: '#e53935', critical: '#7a0019' };
  function show(text) { details.textContent = text; details.style.display = text ? 'block' : 'none'; }
  function titleOf(g) { const t = g.querySelector(':scope > title'); return t ? t.textContent : ''; }
  function expand(g) {
    const open = svg.querySelector('g.expanded[data-box="' + g.id + '"]');
    if (open) { open.remove(); return null; }
    const list = boxes[g.id] || [];
    const rect = g.querySelector('rect');
    const x0 = Number(rect.getAttribute('x')), y0 = Number(rect.getAttribute('y')) + Number(rect.getAttribute('height')) + 4;
    const label = ([name, rank]) => name + (rank >= 0 ? ' #' + rank : '');
    const cols = 4, h = 16, w = Math.max(92, 8 + 6 * Math.max(...list.map((e) => label(e).length)));
    const group = document.createElementNS(NS, 'g');
    group.setAttribute('class', 'expanded');
    group.dataset.box = g.id;
    const back = document.createElementNS(NS, 'rect');
    back.setAttribute('x', x0 - 4); back.setAttribute('y', y0 - 4);
    back.setAttribute('width', Math.min(list.length, cols) * w + 8);
    back.setAttribute('height', Math.ceil(list.length / cols) * h + 8);
    back.setAttribute('fill', '#ffffff'); back.setAttribute('stroke', '#5b6b7f');
    group.appendChild(back);
    list.forEach(([name, rank, severity], i) => {
      const x = x0 + (i % cols) * w, y = y0 + Math.floor(i / cols) * h;
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('class', 'entry'); r.dataset.name = name;
      r.setAttribute('x', x); r.setAttribute('y', y); r.setAttribute('width', w - 2); r.setAttribute('height', h - 2);
      r.setAttribute('fill', rank >= 0 ? rankColor(rank) : '#f6f6f6');
      r.setAttribute('stroke', severity ? sevColor[severity] : '#9aa5b1');
      r.setAttribute('stroke-width', severity ? 2 : 1);
      const t = document.createElementNS(NS, 'text');
      t.setAttribute('x', x + 3); t.setAttribute('y', y + 11); t.setAttribute('font-size', '10');
      t.setAttribute('pointer-events', 'none');  // a click on the name is a click on its entry
      t.textContent = label([name, rank]);
      const tip = document.createElementNS(NS, 'title');
      tip.textContent = name + (rank >= 0 ? '\nnode rank ' + rank : '') + (severity ? '\nworst finding: ' + severity : '');
      r.appendChild(tip);
      group.appendChild(r); group.appendChild(t);
    });
    svg.appendChild(group);
    // Room below the drawing for a list that runs past it.
    const bottom = y0 + Math.ceil(list.length / cols) * h + 12, right = x0 + cols * w + 12;
    const [vw, vh] = [Number(svg.getAttribute('width')), Number(svg.getAttribute('height'))];
    if (bottom > vh || right > vw) {
      const [nw, nh] = [Math.max(vw, right), Math.max(vh, bottom)];
      svg.setAttribute('width', nw); svg.setAttribute('height', nh); svg.setAttribute('viewBox', '0 0 ' + nw + ' ' + nh);
      svg.querySelector('rect.background').setAttribute('height', nh);
      svg.querySelector('rect.background').setAttribute('width', nw);
    }
    return group;
  }
  svg.addEventListener('click', (e) => {
    const entry = e.target.closest('rect.entry');
    if (entry) { show(titleOf(entry)); return; }
    const g = e.target.closest('g.switch, g.host, g.leafbox, g.offfabric, g.unmapped, g.wire');
    if (!g) { show(''); return; }
    if (g.matches('g.leafbox, g.offfabric')) expand(g);
    show(titleOf(g));
  });
  function search(name) {
    svg.querySelectorAll('.hit').forEach((el) => el.classList.remove('hit'));
    if (!name) { found.textContent = ''; show(''); return; }
    const host = Array.from(svg.querySelectorAll('g.host')).find((g) => g.dataset.name === name);
    if (host) {
      host.classList.add('hit'); host.scrollIntoView({ block: 'center', inline: 'center' });
      show(titleOf(host)); found.textContent = 'found';
      return;
    }
    const box = Object.keys(boxes).find((id) => boxes[id].some((h) => h[0] === name));
    if (!box) { found.textContent = 'no host named ' + name; show(''); return; }
    const g = document.getElementById(box);
    const open = svg.querySelector('g.expanded[data-box="' + box + '"]') || expand(g);
    const entry = Array.from(open.querySelectorAll('rect.entry')).find((r) => r.dataset.name === name);
    entry.classList.add('hit'); g.classList.add('hit');
    entry.scrollIntoView({ block: 'center', inline: 'center' });
    show(titleOf(entry));
    found.textContent = 'in the box of ' + g.dataset.name;
  }
  document.getElementById('search').addEventListener('change', (e) => search(e.target.value.trim()));
  const fit = document.getElementById('fit');
  fit.addEventListener('change', (e) => svg.classList.toggle('fit', e.target.checked));
  // page.html#fit opens fitted to the window; page.html#host=NAME finds a host.
  if (location.hash === '#fit') { fit.checked = true; svg.classList.add('fit'); }
  if (location.hash.startsWith('#host=')) search(decodeURIComponent(location.hash.slice(6)));
})();
)";

// The hosts of every box, for expanding and searching: {"b0": [[name, rank, severity], ...]}.
std::string BoxesJson(const Drawing& d) {
  nlohmann::ordered_json boxes = nlohmann::ordered_json::object();
  for (const Shape& s : d.shapes) {
    if (s.boxed.empty()) continue;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const BoxedHost& b : s.boxed)
      list.push_back(nlohmann::ordered_json::array({b.name, b.node_rank, b.worst ? std::string(SeverityName(*b.worst)) : ""}));
    boxes[s.id] = std::move(list);
  }
  // ensure_ascii, then no '<' at all: nothing in it can close the script element.
  std::string text = boxes.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

}  // namespace

std::string RenderHtml(const Drawing& d) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + XmlText(d.title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<div id=\"bar\"><label>host <input id=\"search\" type=\"search\" placeholder=\"name, then Enter\"></label>"
         "<span id=\"found\"></span> <label><input id=\"fit\" type=\"checkbox\"> fit to window</label>"
         " &#8212; click a switch, host, box or cable for its details; a box to list its hosts</div>\n";
  out += "<pre id=\"details\"></pre>\n<div id=\"canvas\">\n" + RenderSvgElement(d) + "</div>\n";
  out += "<script type=\"application/json\" id=\"boxes\">" + BoxesJson(d) + "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace topolaunch
