// `topolaunch discover`: fabric + layouts -> topology.json / summary / Slurm topology.conf.
#include <chrono>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/hostlist.h"
#include "core/text_io.h"
#include "discover/discover_pipeline.h"
#include "discover/slurm_block_writer.h"
#include "discover/slurm_topology_writer.h"
#include "discover/topology_summary.h"
#include "topolaunch/topology_json.h"

namespace topolaunch::cli {

namespace {

struct DiscoverFlags {
  DiscoverOptions discover;
  std::vector<std::string> fabrics;  // --fabric, repeatable: one file per subnet
  std::string topology_in;  // re-read a topology.json instead of discovering
  std::string format = "json";
  bool json = false;
  bool no_layout = false;
  double timeout_s = 60;
  std::string output;
  std::string slurm_nodes;  // --slurm-nodes: a Slurm host list
};

Result<Topology> LoadOrDiscover(DiscoverFlags& flags) {
  if (!flags.topology_in.empty()) {
    Result<std::string> text = ReadTextFile(flags.topology_in);
    if (!text.ok()) return text.take_error();
    return ParseTopologyJson(*text, flags.topology_in);
  }
  DiscoverOptions& d = flags.discover;
  if (!flags.fabrics.empty()) {
    d.fabric = flags.fabrics.front();
    d.more_fabrics.assign(flags.fabrics.begin() + 1, flags.fabrics.end());
  }
  bool fabric_file = d.fabric != "auto" && d.fabric != "live" && d.fabric != "none";
  // A fabric file usually describes another cluster: this machine's layout
  // does not belong in it unless asked for with --hwloc-xml/--layout-dir.
  d.local_layout = !flags.no_layout && !fabric_file;
  if (flags.no_layout) d.hwloc_xml.clear(), d.layout_dir.clear();
  d.live.timeout = std::chrono::milliseconds(static_cast<long long>(flags.timeout_s * 1000));
  d.local_layout_timeout = d.live.timeout;
  d.live.past_deadline = ExitAfterTimeout;
  d.live.progress = [](int nodes) { Note(fmt::format("fabric walk found {} nodes", nodes)); };
  // Large fabrics take seconds: say that the walk is alive, every 5 s.
  d.live.still_walking = [](std::chrono::milliseconds elapsed) {
    if (elapsed.count() / 1000 % 5 == 0) Note(fmt::format("fabric walk: {} s so far", elapsed.count() / 1000));
  };
  d.generated.by = VersionString();
  d.generated.at = NowRfc3339();
  d.note = [](std::string_view text) { Note(text); };
  return RunDiscovery(d);
}

// topology.json into a file, written while it is made (a 4,096-host fabric's
// is 5 MB): the file appears whole, or not at all.
int WriteJsonFile(const std::string& path, const Topology& topology) {
  constexpr size_t kPieceBytes = 256 << 10;
  Result<std::unique_ptr<AtomicFileStream>> stream = AtomicFileStream::Open(path);
  if (!stream.ok()) return ReportError(stream.error());
  WriteTopologyJson(topology, kPieceBytes, [&](std::string piece) { (*stream)->Append(std::move(piece)); });
  Status written = (*stream)->Commit();
  return written.ok() ? 0 : ReportError(written.error());
}

int RunDiscover(DiscoverFlags& flags) {
  if (flags.json) flags.format = "json";
  SlurmTreeOptions slurm;
  if (!flags.slurm_nodes.empty()) {
    if (flags.format != "slurm" && flags.format != "slurm-block")
      return ReportError(Error(ErrorCode::kBadInput, "--slurm-nodes", "is only read with --format slurm or slurm-block"));
    Result<std::vector<std::string>> nodes = ExpandHostList(flags.slurm_nodes);
    if (!nodes.ok()) {
      Error e = nodes.take_error();
      for (Problem& p : e.problems) p.where = "--slurm-nodes: " + p.where;
      return ReportError(e);
    }
    slurm.nodes.emplace(nodes->begin(), nodes->end());
  }
  Result<Topology> topology = LoadOrDiscover(flags);
  // The abandoned layout load still holds hwloc or NVML: leave at once.
  if (!topology.ok() && topology.error().code == ErrorCode::kTimeout) ExitAfterTimeout(topology.error());
  if (!topology.ok()) return ReportError(topology.error());
  if (flags.format == "json" && !flags.output.empty() && flags.output != "-") return WriteJsonFile(flags.output, *topology);
  std::string data;
  if (flags.format == "json") {
    data = FormatTopologyJson(*topology);
  } else if (flags.format == "text") {
    data = FormatTopologySummary(*topology);
  } else {
    Result<std::string> conf = flags.format == "slurm-block" ? FormatSlurmBlockConf(*topology, slurm)
                                                             : FormatSlurmTopologyConf(*topology, slurm);
    if (!conf.ok()) return ReportError(conf.error());
    data = std::move(conf).value();
  }
  return WriteOutput(flags.output, data);
}

}  // namespace

void AddDiscoverCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<DiscoverFlags>();
  CLI::App* cmd = app.add_subcommand("discover", "Find the InfiniBand fabric and the node layout; write topology.json");
  cmd->footer(R"(Examples:
  topolaunch discover -o topology.json                  # live fabric (if an HCA is present) + this node's layout
  topolaunch discover --fabric live --ca mlx5_0 --port 1 --format text
  topolaunch discover --fabric fabric.ibnet --layout-dir layouts/ -o topology.json
  ibnetdiscover --cache fabric.cache && topolaunch discover --fabric fabric.cache
  topolaunch discover --fabric fabric.ibnet --format slurm -o /etc/slurm/topology.conf
  topolaunch discover --fabric live --layout-dir layouts/ --format slurm-block -o topology.conf   # NVL72 racks
  topolaunch discover --fabric rail0.ibnet --fabric rail1.ibnet -o topology.json   # one dump per subnet
  topolaunch discover --topology topology.json --format text   # validate and summarize an existing file

Exit status: 0 ok, 2 bad usage or input, 3 a system part missing or unreachable (no HCA, timeout).)");
  cmd->add_option("--fabric", flags->fabrics,
                  "auto (live if an HCA is present, the default), live, none, or FILE: an ibnetdiscover dump or "
                  "an `ibnetdiscover --cache` file (detected); repeat with one FILE per subnet for per-rail or "
                  "per-plane subnets")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--ca", flags->discover.live.ca, "HCA to walk the fabric from (default: the first)");
  cmd->add_option("--port", flags->discover.live.port, "HCA port (default: the first active)")
      ->check(CLI::Range(0, 255));
  cmd->add_option("--max-smps", flags->discover.live.max_smps,
                  "SMPs in flight during the live walk (ibnetdiscover --outstanding_smps; it keeps 2): the walk waits "
                  "on round trips, so more in flight is faster; 4 is what OpenSM sends")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--timeout", flags->timeout_s,
                  "seconds the live fabric walk may take, and this machine's layout (hwloc, NVML) loaded beside it")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--node-name-map", flags->discover.node_name_map_file,
                  "GUID -> name map in infiniband-diags' format");
  cmd->add_option("--hwloc-xml", flags->discover.hwloc_xml, "one host's layout from an hwloc XML file");
  cmd->add_option("--layout-dir", flags->discover.layout_dir,
                  "a folder of per-host layouts: HOST.xml (hwloc) or HOST.json (written on the host by `discover "
                  "--fabric none`, with its NVML facts)");
  cmd->add_flag("--no-layout", flags->no_layout, "do not read any host layout");
  cmd->add_option("--topology", flags->topology_in, "read and validate this topology.json instead of discovering");
  cmd->add_option("--format", flags->format,
                  "json (topology.json), text (summary), slurm (topology.conf for topology/tree), slurm-block "
                  "(topology.conf for topology/block: one block per NVLink domain)")
      ->check(CLI::IsMember({"json", "text", "slurm", "slurm-block"}))
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "same as --format json");
  cmd->add_option("--slurm-nodes", flags->slurm_nodes,
                  "with --format slurm or slurm-block: only these hosts (a Slurm host list: slurm.conf's NodeName=)");
  cmd->add_option("-o,--output", flags->output, "write to FILE atomically instead of stdout");
  cmd->callback([flags, &exit_status] { exit_status = RunDiscover(*flags); });
}

}  // namespace topolaunch::cli
