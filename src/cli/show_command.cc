// `topolaunch show`: draw the fabric, a plan's placement and an audit's findings.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "audit/audit_json_read.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/text_io.h"
#include "rankmap/plan_json.h"
#include "show/fabric_drawing.h"
#include "show/html_page.h"
#include "show/svg_render.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::cli {

namespace {

struct ShowFlags {
  std::string topology;
  std::string plan;
  std::string audit;
  std::string format;
  std::string output;
  int max_hosts_drawn = DrawOptions{}.max_hosts_drawn;
};

template <typename T>
Result<T> ReadWith(const std::string& path, Result<T> (*parse)(std::string_view, std::string_view)) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.take_error();
  return parse(*text, path);
}

// --format, else the output file's extension (.svg, .html, .htm), else SVG
// for a name without one (stdout, /dev/stdout). Any other extension is
// refused: `-o fabric.png` wrote SVG into a .png and exited 0.
Result<std::string> ChosenFormat(const ShowFlags& flags) {
  if (!flags.format.empty()) return flags.format;
  std::string name = flags.output.substr(flags.output.rfind('/') + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return std::string("svg");
  std::string extension = name.substr(dot + 1);
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  if (extension == "svg") return std::string("svg");
  if (extension == "html" || extension == "htm") return std::string("html");
  return Error(ErrorCode::kBadUsage, "-o " + flags.output,
               fmt::format("show writes SVG (.svg) or HTML (.html), not .{}; name the file .svg or .html, or pass "
                           "--format (a browser, or `rsvg-convert fabric.svg -o fabric.png`, makes a picture of the SVG)",
                           extension));
}

int RunShow(const ShowFlags& flags) {
  Result<std::string> format = ChosenFormat(flags);
  if (!format.ok()) return ReportError(format.error());
  Result<Topology> topology = ReadWith<Topology>(flags.topology, ParseTopologyJson);
  if (!topology.ok()) return ReportError(topology.error());
  std::optional<Plan> plan;
  if (!flags.plan.empty()) {
    Result<Plan> read = ReadWith<Plan>(flags.plan, ParsePlanJson);
    if (!read.ok()) return ReportError(read.error());
    plan = std::move(*read);
  }
  std::optional<AuditReport> audit;
  if (!flags.audit.empty()) {
    Result<AuditReport> read = ReadWith<AuditReport>(flags.audit, ParseAuditJson);
    if (!read.ok()) return ReportError(read.error());
    audit = std::move(*read);
  }
  DrawOptions options;
  options.max_hosts_drawn = flags.max_hosts_drawn;
  Drawing drawing = DrawFabric(*topology, plan ? &*plan : nullptr, audit ? &*audit : nullptr, options);
  if (drawing.counts.findings_not_drawn)
    Note(fmt::format("{} audit finding(s) name no switch, host or cable of the topology: counted in the legend",
                     drawing.counts.findings_not_drawn));
  if (drawing.collapsed)
    Note(fmt::format("{} hosts: each leaf's hosts are one box (--max-hosts-drawn {} draws them one by one{})",
                     drawing.counts.hosts, drawing.counts.hosts,
                     *format == "html" ? "; the page lists a box's hosts on click" : ""));
  return WriteOutput(flags.output, *format == "html" ? RenderHtml(drawing) : RenderSvg(drawing));
}

}  // namespace

void AddShowCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<ShowFlags>();
  CLI::App* cmd = app.add_subcommand("show", "Draw the fabric, a plan's placement and an audit's findings (SVG or HTML)");
  cmd->footer(R"(Switch levels are rows (the highest on top), hosts sit under their leaf, cables are
coloured by rate. With --plan, hosts are coloured by node rank and the ring is drawn
in node-rank order, its crossings in the legend. With --audit, each finding is drawn
on the cable, switch or host it is about, the worst severity showing. Past
--max-hosts-drawn hosts, each leaf's hosts become one box with their count, node
ranks and worst finding. The same input gives the same bytes. HTML is one file
with no external fetch: hover or click for details, search for a host, click a
box to list its hosts.

Examples:
  topolaunch show --topology topology.json -o fabric.svg
  topolaunch plan --topology topology.json --hosts 'node[01-64]' --json -o plan.json
  topolaunch show --topology topology.json --plan plan.json -o placement.html
  topolaunch audit --topology topology.json --json -o audit.json
  topolaunch show --topology topology.json --audit audit.json --plan plan.json -o fabric.html)");
  cmd->add_option("--topology", flags->topology, "topology.json from 'topolaunch discover'")->required();
  cmd->add_option("--plan", flags->plan, "plan.json from 'topolaunch plan --json': node ranks and the ring");
  cmd->add_option("--audit", flags->audit, "audit report from 'topolaunch audit --json': findings where they are");
  cmd->add_option("--format", flags->format, "svg or html (default: from -o's extension, .svg or .html; another extension is refused; none: svg)")
      ->check(CLI::IsMember({"svg", "html"}));
  cmd->add_option("--max-hosts-drawn", flags->max_hosts_drawn,
                  "past this many hosts, each leaf's hosts are one box (0: always boxes)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "write to FILE atomically instead of stdout");
  cmd->callback([flags, &exit_status] { exit_status = RunShow(*flags); });
}

}  // namespace topolaunch::cli
