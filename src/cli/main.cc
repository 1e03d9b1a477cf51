// topolaunch: topology-aware launcher for multi-node GPU training.
//
// main() is a list of subcommands; each lives in its own file.
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/nearest_word.h"

namespace {

// `topolaunch dicsover`: CLI11 says only "A subcommand is required". The
// word that is no subcommand is named, with the nearest one.
std::optional<std::string> UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return std::nullopt;
    names.push_back(sub->get_name());
  }
  std::optional<std::string> near = topolaunch::NearestWord(word, names);
  return fmt::format("unknown command '{}'{}", word, near ? fmt::format(" (did you mean {}?)", *near) : "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"topolaunch: discover the InfiniBand fabric and node layout, plan rank order, launch torchrun"};
  app.set_version_flag("-V,--version", topolaunch::cli::VersionString());
  app.require_subcommand(1);
  int exit_status = 0;
  topolaunch::cli::AddDiscoverCommand(app, exit_status);
  topolaunch::cli::AddHostlistCommand(app, exit_status);
  topolaunch::cli::AddAgentCommand(app, exit_status);
  topolaunch::cli::AddBindCommand(app, exit_status);
  topolaunch::cli::AddEnvCommand(app, exit_status);
  topolaunch::cli::AddAuditCommand(app, exit_status);
  topolaunch::cli::AddPlanCommand(app, exit_status);
  topolaunch::cli::AddRunCommand(app, exit_status);
  topolaunch::cli::AddShowCommand(app, exit_status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::optional<std::string> unknown = UnknownCommand(app, argc, argv);
    fmt::print(stderr, "topolaunch: error: {}\n", unknown ? *unknown : std::string(e.what()));
    // CLI11 2.1 hands what follows `--` to the top level, so `run ... -- train.py` fails here.
    if (argc > 1 && std::string_view(argv[1]) == "run" && std::find(argv + 2, argv + argc, std::string_view("--")) != argv + argc &&
        std::string_view(e.what()).find("not expected") != std::string_view::npos)
      fmt::print(stderr, "topolaunch: run takes no `--`: give its options, then SCRIPT and the script's arguments\n");
    fmt::print(stderr, "Run 'topolaunch --help' or 'topolaunch <command> --help'.\n");
    return 2;
  } catch (const std::exception& e) {
    // The last resort, after every destructor on the way has run (a run's
    // nodes are stopped by then): a message and exit 3, never abort().
    topolaunch::PrintTo(stderr, fmt::format("topolaunch: error: internal: {}\n", e.what()));
    return 3;
  }
  return exit_status;
}
