// `topolaunch bind`: the worker command `run` gives torchrun. It applies
// this local rank's CPU/memory binding (TOPOLAUNCH_BINDINGS, LOCAL_RANK)
// with numactl and execs, so the worker's PID is the one torchrun started
// and signals. Not meant to be typed by people, so hidden from the list.
//
// The program's arguments must arrive byte for byte. CLI11 2.1 rewrites
// the values of a vector positional ("[a,b]" becomes two values, "[]"
// none), so the program is a single positional and the rest is taken
// verbatim through prefix_command(): after PROGRAM everything lands in
// remaining(), in order. What CLI11 puts there before PROGRAM is the `--`
// mark and any unknown options; `--` is required, so the first "--" in
// remaining() is always that mark (a later "--" without it ends the
// subcommand and fails the parse).
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "core/text_io.h"
#include "launch/binding_spec.h"
#include "launch/binding_within_cgroup.h"
#include "launch/local_executor.h"
#include "launch/program_search.h"
#include "launch/rank_output_socket.h"
#include "launch/slurm_rank_env.h"

extern char** environ;

namespace topolaunch::cli {

namespace {

constexpr std::string_view kUsage = "topolaunch bind [--numactl PATH] -- PROGRAM [ARGS...]";

struct BindOptions {
  std::string numactl;                   ///< --numactl; empty: numactl from PATH
  std::vector<std::string> program;      ///< PROGRAM ARGS..., verbatim
  std::optional<std::string> bindings;   ///< TOPOLAUNCH_BINDINGS
  std::optional<std::string> local_rank; ///< LOCAL_RANK
  std::optional<std::string> rank;       ///< RANK
  std::optional<std::string> output;     ///< TOPOLAUNCH_RANK_OUTPUT
  AllowedPlaces allowed;                 ///< this process's cpuset (/proc/self/status)
};

std::optional<std::string> EnvValue(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value ? std::optional<std::string>(value) : std::nullopt;
}

std::vector<std::string> EnvironmentNames() {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) names.emplace_back(std::string_view(*e).substr(0, std::string_view(*e).find('=')));
  return names;
}

Result<std::string> ResolveNumactl(const std::string& flag) {
  std::string path = FindProgram(flag.empty() ? "numactl" : flag);
  if (!path.empty()) return path;
  if (flag.empty()) return Error(ErrorCode::kUnavailable, "bind", "numactl not found (apt-get install numactl)");
  return Error(ErrorCode::kUnavailable, "--numactl",
               fmt::format("{}: numactl not found or not executable (apt-get install numactl)", flag));
}

// The command to exec; reads nothing but `options`, apart from the PATH search.
Result<Command> BoundWorker(const BindOptions& options) {
  if (!options.bindings || options.bindings->empty()) return Command{options.program};
  std::vector<Problem> problems;
  Result<std::vector<BindingEntry>> entries = ParseBindingSpec(*options.bindings);
  if (!entries.ok()) problems = entries.error().problems;
  int local_rank = -1;
  const std::string& rank = options.local_rank.value_or("");
  auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), local_rank);
  if (!options.local_rank)
    problems.push_back({"LOCAL_RANK", "not set (torchrun sets it for each worker); needed with TOPOLAUNCH_BINDINGS"});
  else if (ec != std::errc() || end != rank.data() + rank.size() || rank.empty())
    problems.push_back({"LOCAL_RANK", fmt::format("\"{}\" is not a number", rank)});
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  // Within the step's cgroup; said once a node, by local rank 0.
  NarrowedBindings narrowed = WithinAllowed(*entries, options.allowed);
  if (local_rank == 0 && !narrowed.note.empty()) Note(narrowed.note);
  *entries = std::move(narrowed.entries);
  std::string numactl;
  if (local_rank >= 0 && static_cast<size_t>(local_rank) < entries->size() &&
      BindsSomething((*entries)[static_cast<size_t>(local_rank)])) {
    Result<std::string> found = ResolveNumactl(options.numactl);
    if (!found.ok()) return found.take_error();
    numactl = *found;
  }
  return BoundCommand(*entries, local_rank, options.program, numactl);
}

// PROGRAM's arguments from CLI11's remaining(): those after the `--` mark.
Result<std::vector<std::string>> ArgumentsAfterMark(const std::vector<std::string>& remaining) {
  auto mark = std::find(remaining.begin(), remaining.end(), "--");
  if (mark == remaining.end())
    return Error(ErrorCode::kBadUsage, "bind", fmt::format("put -- before the program: {}", kUsage));
  if (mark != remaining.begin())
    return Error(ErrorCode::kBadUsage, "bind", fmt::format("unknown option {}: {}", remaining.front(), kUsage));
  return std::vector<std::string>(mark + 1, remaining.end());
}

std::optional<int> Number(const std::optional<std::string>& text) {
  int value = -1;
  if (!text || text->empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < 0) return std::nullopt;
  return value;
}

// The agent's per-rank output (rank_output_socket.h), when it offers one:
// this rank's lines then reach it whole and labelled. When it cannot be
// reached the rank still runs, its lines unlabelled through torchrun.
void ConnectToAgent(const BindOptions& options) {
  if (!options.output || options.output->empty()) return;
  unsetenv(kRankOutputEnvName);  // not for the script's own children
  std::optional<int> rank = Number(options.rank);
  std::optional<int> local_rank = Number(options.local_rank);
  if (!rank || !local_rank || *local_rank > *rank) {
    Note("RANK or LOCAL_RANK not set by torchrun: this rank's lines are not labelled");
    return;
  }
  if (Status connected = ConnectRankOutput(*options.output, {*rank, *local_rank}); !connected.ok())
    Note(fmt::format("{}; rank {}'s lines are not labelled", connected.error().Message(), *rank));
}

int RunBind(BindOptions options, const std::string& program, const std::vector<std::string>& remaining) {
  Result<std::vector<std::string>> arguments = ArgumentsAfterMark(remaining);
  if (!arguments.ok()) return ReportError(arguments.error());
  options.program = {program};
  options.program.insert(options.program.end(), arguments->begin(), arguments->end());
  options.bindings = EnvValue(kBindingsEnvName);
  options.local_rank = EnvValue("LOCAL_RANK");
  options.rank = EnvValue("RANK");
  options.output = EnvValue(kRankOutputEnvName);
  if (Result<std::string> status = ReadTextFile("/proc/self/status"); status.ok())
    options.allowed = ParseAllowedPlaces(*status);
  Result<Command> command = BoundWorker(options);
  if (!command.ok()) return ReportError(command.error());
  // Under srun, Slurm's task variables are the agent's: made torchrun's (slurm_rank_env.h).
  EnvChange slurm = SlurmVariablesForRank(EnvValue, EnvironmentNames());
  command->env.insert(command->env.end(), slurm.set.begin(), slurm.set.end());
  command->unset.insert(command->unset.end(), slurm.unset.begin(), slurm.unset.end());
  ConnectToAgent(options);
  Status replaced = ReplaceProcess(*command);  // returns only on failure
  return ReportError(replaced.error());
}

}  // namespace

void AddBindCommand(CLI::App& app, int& exit_status) {
  CLI::App* cmd = app.add_subcommand(
      "bind", "Worker wrapper (started by torchrun for `run`): binds this local rank's CPUs and memory, then execs");
  cmd->group("");  // hidden from `topolaunch --help`
  auto options = std::make_shared<BindOptions>();
  auto program = std::make_shared<std::string>();
  cmd->add_option("--numactl", options->numactl, "numactl to use (default: numactl from PATH)");
  cmd->add_option("program", *program, "Program to exec, after --; its arguments follow it verbatim")->required();
  cmd->prefix_command();
  cmd->footer(fmt::format(R"(Usage: {}

Reads TOPOLAUNCH_BINDINGS (one node's bindings, entry i for local rank i:
CPUS/NUMA, e.g. "0-15/0;16-31/0;32-47/1;48-63/1", an empty part unbound)
and LOCAL_RANK (set by torchrun), and execs
  numactl --physcpubind=CPUS --membind=NUMA -- PROGRAM ARGS...
in place of itself. Without TOPOLAUNCH_BINDINGS (or with it empty), or for
an entry that binds nothing, execs PROGRAM ARGS... unbound. With
TOPOLAUNCH_RANK_OUTPUT (set by `topolaunch agent`), stdout and stderr are
first connected to the agent, which labels each line with RANK.

Exit status (when it cannot exec): 2 for a bad TOPOLAUNCH_BINDINGS or
LOCAL_RANK, 3 when numactl or PROGRAM cannot be run.

Example:
  TOPOLAUNCH_BINDINGS='0-3/0;4-7/1' LOCAL_RANK=1 topolaunch bind -- python train.py --lr 0.1)",
                          kUsage));
  cmd->callback([&exit_status, cmd, options, program] { exit_status = RunBind(*options, *program, cmd->remaining()); });
}

}  // namespace topolaunch::cli
