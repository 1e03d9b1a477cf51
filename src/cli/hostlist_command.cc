// `topolaunch hostlist`: Slurm host-list expressions, both ways.
#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/hostlist.h"

namespace topolaunch::cli {

namespace {

struct HostlistFlags {
  std::vector<std::string> expressions;
  bool compress = false;
  bool json = false;
};

int RunHostlist(const HostlistFlags& flags) {
  std::vector<std::string> hosts;
  for (const std::string& expression : flags.expressions) {
    Result<std::vector<std::string>> expanded = ExpandHostList(expression);
    if (!expanded.ok()) return ReportError(expanded.error());
    hosts.insert(hosts.end(), expanded->begin(), expanded->end());
  }
  std::string out;
  if (flags.compress) {
    out = flags.json ? fmt::format("\"{}\"\n", CompressHostList(hosts)) : CompressHostList(hosts) + "\n";
  } else if (flags.json) {
    out = "[";
    for (size_t i = 0; i < hosts.size(); ++i) out += fmt::format("{}\"{}\"", i ? "," : "", hosts[i]);
    out += "]\n";
  } else {
    for (const std::string& host : hosts) out += host + "\n";
  }
  return WriteOutput("", out);
}

}  // namespace

void AddHostlistCommand(CLI::App& app, int& exit_status) {
  auto flags = std::make_shared<HostlistFlags>();
  CLI::App* cmd = app.add_subcommand("hostlist", "Expand or compress Slurm host lists (like scontrol show hostnames/hostlist)");
  cmd->footer(R"(Examples:
  topolaunch hostlist 'node[01-04,07],gpu-[1-2]'     # one host per line
  topolaunch hostlist --compress node1,node2,node3   # node[1-3]
  topolaunch hostlist --json "$SLURM_JOB_NODELIST")");
  cmd->add_option("EXPR", flags->expressions, "host-list expressions")->required();
  cmd->add_flag("--compress", flags->compress, "print the compressed form (scontrol show hostlist)");
  cmd->add_flag("--json", flags->json, "print a JSON array (or string with --compress)");
  cmd->callback([flags, &exit_status] { exit_status = RunHostlist(*flags); });
}

}  // namespace topolaunch::cli
