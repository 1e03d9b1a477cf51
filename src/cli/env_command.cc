// `topolaunch env`: the NCCL and PyTorch environment for one host, derived
// from the topology, each value with its reason.
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "discover/local_host.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/text_io.h"
#include "discover/discover_pipeline.h"
#include "env/compute_ports.h"
#include "env/env_builder.h"
#include "env/env_format.h"
#include "env/nccl_topo_xml.h"
#include "env/rdma_sysfs.h"
#include "env/route_lookup.h"
#include "topolaunch/topology_json.h"

extern char** environ;

namespace topolaunch::cli {

namespace {

struct EnvFlags {
  std::string topology_file;
  std::string host;
  std::string format = "sh";
  bool json = false;
  bool explain = false;
  bool override_user = false;
  std::string nccl_topo;
  std::string templates;
  std::string profile = "auto";
  std::string rank0_host;
  std::string sysfs = kSysClassInfiniband;
  std::string output;
};

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text = *entry;
    size_t equals = text.find('=');
    if (equals != std::string_view::npos) env.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return env;
}

Result<Topology> LoadTopology(const EnvFlags& flags) {
  if (!flags.topology_file.empty()) {
    Result<std::string> text = ReadTextFile(flags.topology_file);
    if (!text.ok()) return text.take_error();
    return ParseTopologyJson(*text, flags.topology_file);
  }
  DiscoverOptions options;  // this machine, live: fabric when an HCA is present, hwloc layout
  options.generated = {VersionString(), NowRfc3339(), ""};
  options.note = [](std::string_view text) { Note(text); };
  options.live.past_deadline = ExitAfterTimeout;
  return RunDiscovery(options);
}

Result<std::string> ChooseHost(const Topology& topology, const std::string& wanted) {
  std::string hosts;
  for (const TopologyHost& h : topology.hosts) hosts += (hosts.empty() ? "" : ", ") + h.name;
  if (!wanted.empty()) {
    if (topology.FindHost(wanted)) return wanted;
    return Error(ErrorCode::kBadUsage, "--host", fmt::format("{} is not in the topology (hosts: {})", wanted, hosts));
  }
  if (topology.FindHost(LocalShortHostName())) return LocalShortHostName();
  if (topology.hosts.size() == 1) return topology.hosts.front().name;
  return Error(ErrorCode::kBadUsage, "--host",
               fmt::format("required: the topology has {} hosts ({})", topology.hosts.size(), hosts));
}

// What only the host itself can see: its RDMA ports and its routes.
void GatherLocalFacts(const EnvFlags& flags, bool local, const std::map<std::string, std::string>& user_env, EnvFacts& facts) {
  auto master = user_env.find("MASTER_ADDR");
  facts.rank0_host = !flags.rank0_host.empty() ? flags.rank0_host : master != user_env.end() ? master->second : facts.host;
  if (!local) {
    facts.socket_route_problem = fmt::format("computed on {} for {}: the route can only be looked up on {} itself",
                                             LocalShortHostName(), facts.host, facts.host);
    return;
  }
  Result<std::vector<RdmaPort>> ports = ReadRdmaPorts(flags.sysfs);
  if (ports.ok()) facts.rdma_ports = std::move(ports).value();
  else Note(ports.error().Message());
  std::unique_ptr<RouteLookup> routes = MakeKernelRouteLookup();
  Result<SocketRoute> route = routes->RouteToward(facts.rank0_host);
  if (route.ok()) facts.socket_route = std::move(route).value();
  else facts.socket_route_problem = route.error().Message();
  facts.socket_interfaces = routes->Interfaces();
}

Status WriteNcclTopo(const std::string& file, const Topology& topology, FabricKind fabric, EnvFacts& facts) {
  const TopologyHost* host = topology.FindHost(facts.host);
  if (!host->layout)
    return Error(ErrorCode::kBadInput, "--nccl-topo",
                 fmt::format("{} has no host layout in the topology (discover with --hwloc-xml or --layout-dir)", facts.host));
  Result<std::string> xml = FormatNcclTopoXml(*host->layout, ComputePortsFor(facts, fabric, nullptr), fabric);
  if (!xml.ok()) return xml.take_error();
  Status written = WriteFileAtomically(file, *xml);
  if (!written.ok()) return written;
  facts.nccl_topo_file = std::filesystem::absolute(file).string();
  return Ok{};
}

int RunEnv(EnvFlags& flags) {
  if (flags.json) flags.format = "json";
  Result<Topology> topology = LoadTopology(flags);
  if (!topology.ok()) return ReportError(topology.error());
  Result<std::string> host = ChooseHost(*topology, flags.host);
  if (!host.ok()) return ReportError(host.error());
  std::map<std::string, std::string> user_env = ProcessEnvironment();
  EnvFacts facts;
  facts.topology = &*topology;
  facts.host = *host;
  GatherLocalFacts(flags, flags.topology_file.empty() || *host == LocalShortHostName(), user_env, facts);
  FabricKind fabric = flags.profile == "auto" ? DetectFabricKind(facts) : *ParseFabricKind(flags.profile);
  if (!flags.nccl_topo.empty())
    if (Status written = WriteNcclTopo(flags.nccl_topo, *topology, fabric, facts); !written.ok()) return ReportError(written.error());
  Result<std::vector<TemplateLine>> templates =
      LoadEnvTemplates(flags.templates.empty() ? DefaultTemplatesDir() : flags.templates, fabric);
  if (!templates.ok()) return ReportError(templates.error());
  Result<EnvOutcome> env = ComputeEnv(facts, {fabric, std::move(templates).value(), user_env, flags.override_user});
  if (!env.ok()) return ReportError(env.error());
  for (const std::string& warning : env->warnings) fmt::print(stderr, "topolaunch: warning: {}\n", warning);
  std::string data = flags.format == "json"     ? FormatEnvJson(*env)
                     : flags.format == "dotenv" ? FormatEnvDotenv(*env, flags.explain)
                                                : FormatEnvSh(*env, flags.explain);
  return WriteOutput(flags.output, data);
}

}  // namespace

void AddEnvCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<EnvFlags>();
  CLI::App* cmd = app.add_subcommand("env", "Print the NCCL/PyTorch environment for a host, derived from the topology");
  cmd->footer(R"EX(Examples:
  eval "$(topolaunch env)"                                # this machine, discovered live
  topolaunch env --topology topology.json --host node017 --explain
  topolaunch env --topology topology.json --host node017 --format json
  topolaunch env --nccl-topo /tmp/nccl-topo.xml --format dotenv -o nccl.env
  topolaunch env --templates /etc/topolaunch/env --profile roce

Only variables NCCL, PyTorch or CUDA really read are printed. A variable already set in
your environment wins (and is printed as such) unless --override is given.
Exit status: 0 ok, 2 bad usage or input (a template line names the file:line), 3 a system part missing.)EX");
  cmd->add_option("--topology", flags->topology_file, "topology.json from `topolaunch discover` (default: discover this machine live)");
  cmd->add_option("--host", flags->host, "whose environment (default: this machine, or the topology's only host)");
  cmd->add_option("--format", flags->format, "sh (export lines), dotenv, json")
      ->check(CLI::IsMember({"sh", "dotenv", "json"}))
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "same as --format json");
  cmd->add_flag("--explain", flags->explain, "add each variable's reason and source (rule, template, user) as comments");
  cmd->add_flag("--override", flags->override_user, "derived values win over the ones set in your environment");
  cmd->add_option("--nccl-topo", flags->nccl_topo, "write NCCL's topology XML for the host to FILE and set NCCL_TOPO_FILE");
  cmd->add_option("--templates", flags->templates, "folder of profile templates (infiniband.env, roce.env, tcp.env, site.env)");
  cmd->add_option("--profile", flags->profile, "auto (from the fabric found), infiniband, roce, tcp")
      ->check(CLI::IsMember({"auto", "infiniband", "roce", "tcp"}))
      ->capture_default_str();
  cmd->add_option("--rank0-host", flags->rank0_host, "the host of rank 0, for NCCL_SOCKET_IFNAME (default: $MASTER_ADDR, else --host)");
  cmd->add_option("--sysfs", flags->sysfs, "where RDMA devices are listed")->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "write to FILE atomically instead of stdout");
  cmd->callback([flags, &exit_status] { exit_status = RunEnv(*flags); });
}

}  // namespace topolaunch::cli
