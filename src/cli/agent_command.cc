// `topolaunch agent`: the per-node supervisor `run` starts over SSH. Not
// meant to be typed by people, so hidden from the command list.
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "launch/agent.h"

namespace topolaunch::cli {

void AddAgentCommand(CLI::App& app, int& exit_status) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Per-node supervisor (started by `run` over SSH): runs the command of the launch message on stdin");
  cmd->group("");  // hidden from `topolaunch --help`
  cmd->footer(R"(Reads one line of JSON from stdin, e.g.
  {"argv":["torchrun","train.py"],"env":{"NCCL_DEBUG":"WARN"},"cwd":"/work","grace_ms":5000}
runs it in its own process group, forwards its output, and stops the whole
process tree (SIGTERM, then SIGKILL after grace_ms) when stdin reaches EOF or
the agent gets SIGTERM/SIGHUP/SIGINT. Exits with the command's status.

stdin must stay open while the command runs: its EOF means "stop".

The first line may instead be a preflight request, e.g.
  {"preflight":{"programs":["torchrun"],"master_port":29500,"master_addr":"node1","want_layout":true}}
answered with one stdout line "@topolaunch-preflight {...}" (host name, clock,
programs found, port free, hwloc layout, GPUs, RDMA ports, route to
master_addr). The launch message follows on the next line; EOF instead means
"do not start": the agent exits 0.

Examples:
  { echo '{"argv":["hostname"]}'; sleep 10; } | topolaunch agent
  echo '{"preflight":{"programs":["python3"]}}' | topolaunch agent)");
  cmd->callback([&exit_status] {
    Result<int> status = RunAgent(AgentStreams{});
    exit_status = status.ok() ? *status : ReportError(status.error());
  });
}

}  // namespace topolaunch::cli
