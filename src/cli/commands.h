// One function per subcommand: CLI11 fills an option struct, Run* does the
// work and returns the exit status. Nothing else in the program exits.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace topolaunch::cli {

/// Adds `discover` to `app`; the returned callback runs it after parsing.
void AddDiscoverCommand(CLI::App& app, int& exit_status);

/// Adds `audit` to `app`.
void AddAuditCommand(CLI::App& app, int& exit_status);

/// Adds `env` to `app`.
void AddEnvCommand(CLI::App& app, int& exit_status);

/// Adds `hostlist` to `app`.
void AddHostlistCommand(CLI::App& app, int& exit_status);

/// Adds the hidden `agent` (the per-node supervisor `run` starts over SSH).
void AddAgentCommand(CLI::App& app, int& exit_status);

/// Adds the hidden `bind` (the worker wrapper torchrun starts for `run`:
/// applies the local rank's binding with numactl and execs the program).
void AddBindCommand(CLI::App& app, int& exit_status);

/// Adds `plan` to `app`.
void AddPlanCommand(CLI::App& app, int& exit_status);

/// Adds `show` (draws the fabric, a plan and an audit as SVG or HTML).
void AddShowCommand(CLI::App& app, int& exit_status);

/// Adds `run` to `app`.
void AddRunCommand(CLI::App& app, int& exit_status);

}  // namespace topolaunch::cli
