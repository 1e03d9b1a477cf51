#include "launch/srun_step_env.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_io.h"

namespace topolaunch {

namespace {

// From srun's table of environment options (src/srun/opt.c), the ones that
// shape tasks, resources, placement or I/O; job-wide ones (account,
// partition, QOS, name, dependency) and those the step's own options
// override (nodes, tasks, node list, label, unbuffered) are left alone.
constexpr std::array<std::string_view, 55> kShaping = {
    "SLURM_ARBITRARY_NODELIST", "SLURM_CLUSTERS",        "SLURM_CLUSTER_CONSTRAINT", "SLURM_CONSTRAINT",
    "SLURM_CORE_SPEC",          "SLURM_CPU_BIND",        "SLURM_CPU_FREQ_REQ",       "SLURM_CPUS_PER_GPU",
    "SLURM_CPUS_PER_TASK",      "SRUN_CPUS_PER_TASK",    "SLURM_DISABLE_STATUS",     "SLURM_DIST_PLANESIZE",
    "SLURM_DISTRIBUTION",       "SLURM_EXACT",           "SLURM_EXCLUSIVE",          "SLURM_EXPORT_ENV",
    "SRUN_EXPORT_ENV",          "SLURM_GPU_BIND",        "SLURM_GPU_FREQ",           "SLURM_GPUS",
    "SLURM_GPUS_PER_NODE",      "SLURM_GPUS_PER_SOCKET", "SLURM_GPUS_PER_TASK",      "SLURM_GRES",
    "SLURM_GRES_FLAGS",         "SLURM_HINT",            "SLURM_HOSTFILE",           "SLURM_MEM_BIND",
    "SLURM_MEM_PER_CPU",        "SLURM_MEM_PER_GPU",     "SLURM_MEM_PER_NODE",       "SLURM_MPI_TYPE",
    "SLURM_NCORES_PER_SOCKET",  "SLURM_NETWORK",         "SLURM_NSOCKETS_PER_NODE",  "SLURM_NTASKS_PER_CORE",
    "SLURM_NTASKS_PER_GPU",     "SLURM_NTASKS_PER_SOCKET", "SLURM_NTASKS_PER_TRES",  "SLURM_OPEN_MODE",
    "SLURM_OVERCOMMIT",         "SLURM_REMOTE_CWD",      "SLURM_SEGMENT_SIZE",       "SLURM_SPREAD_JOB",
    "SLURM_STDERRMODE",         "SLURM_STDINMODE",       "SLURM_STDOUTMODE",         "SLURM_THREAD_SPEC",
    "SLURM_THREADS_PER_CORE",   "SLURM_TIMELIMIT",       "SLURM_TRES_BIND",          "SLURM_TRES_PER_TASK",
    "SLURM_USE_MIN_NODES",      "SLURM_WAIT",            "SLURM_WORKING_DIR",
};

constexpr std::array<std::string_view, 3> kFixed = {"--mpi=none", "--cpu-bind=none", "--export=ALL"};

}  // namespace

std::span<const std::string_view> StepShapingVariables() { return kShaping; }

std::span<const std::string_view> StepFixedOptions() { return kFixed; }

std::vector<std::string> DroppedForTheStep(const std::vector<std::string>& environment) {
  std::vector<std::string> dropped;
  for (const std::string& entry : environment) {
    std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (std::find(kShaping.begin(), kShaping.end(), name) != kShaping.end()) dropped.push_back(entry);
  }
  return dropped;
}

namespace {

std::optional<std::string> Value(const std::vector<std::string>& environment, std::string_view name) {
  for (const std::string& entry : environment)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return std::nullopt;
}

std::optional<int> Count(std::string_view text, int most) {
  std::optional<long long> count = DecimalNumber(text, 0, most);
  return count ? std::optional<int>(static_cast<int>(*count)) : std::nullopt;
}

struct PerTaskGpus {
  std::string type;
  int count = 0;
};

// "N" or "TYPE:N" (SLURM_GPUS_PER_TASK); in SLURM_TRES_PER_TASK an entry
// "gres/gpu=N", "gres/gpu:N", "gres/gpu:TYPE=N" or "gres/gpu:TYPE:N".
std::optional<PerTaskGpus> ParseTypedCount(std::string_view text) {
  size_t last = text.find_last_of(":=");
  std::optional<int> count = Count(last == std::string_view::npos ? text : text.substr(last + 1), 10'000);
  if (!count || *count == 0) return std::nullopt;
  return PerTaskGpus{std::string(last == std::string_view::npos ? "" : text.substr(0, last)), *count};
}

std::optional<PerTaskGpus> GpusPerTask(const std::vector<std::string>& environment) {
  if (std::optional<std::string> gpus = Value(environment, "SLURM_GPUS_PER_TASK")) return ParseTypedCount(*gpus);
  std::optional<std::string> tres = Value(environment, "SLURM_TRES_PER_TASK");
  if (!tres) return std::nullopt;
  std::string_view rest = *tres;
  while (!rest.empty()) {
    std::string_view entry = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
    for (std::string_view prefix : {"gres/gpu", "gres:gpu"})
      if (entry.starts_with(prefix) && entry.size() > prefix.size() && (entry[prefix.size()] == ':' || entry[prefix.size()] == '='))
        return ParseTypedCount(entry.substr(prefix.size() + 1));
  }
  return std::nullopt;
}

// SLURM_TASKS_PER_NODE: "2(x3),1" is 2, 2, 2, 1.
std::vector<int> TasksPerNode(std::string_view text) {
  std::vector<int> tasks;
  while (!text.empty()) {
    std::string_view entry = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), entry.size() + 1));
    size_t paren = entry.find("(x");
    // Counts no node (100,000 tasks) or job (a million nodes) has are not read.
    std::optional<int> count = Count(entry.substr(0, paren), 100'000);
    std::optional<int> times = paren == std::string_view::npos ? std::optional<int>(1)
                               : entry.ends_with(")")         ? Count(entry.substr(paren + 2, entry.size() - paren - 3), 1'000'000)
                                                              : std::nullopt;
    if (!count || !times || *times < 1) return {};
    tasks.insert(tasks.end(), static_cast<size_t>(*times), *count);
  }
  return tasks;
}

}  // namespace

std::optional<StepGpus> StepGpuRequest(const std::vector<std::string>& environment) {
  std::optional<PerTaskGpus> per_task = GpusPerTask(environment);
  std::optional<std::string> tasks_text = Value(environment, "SLURM_TASKS_PER_NODE");
  if (!per_task || !tasks_text) return std::nullopt;
  std::vector<int> tasks = TasksPerNode(*tasks_text);
  if (tasks.empty()) return std::nullopt;
  auto [fewest, most] = std::minmax_element(tasks.begin(), tasks.end());
  StepGpus gpus{"", per_task->count * *fewest, per_task->count * *most,
                fmt::format("the job asked for {} GPU(s) a task, which a step that asks for none takes as its own "
                            "request, and runs {} task(s) a node",
                            per_task->count, *fewest == *most ? std::to_string(*fewest) : fmt::format("{} to {}", *fewest, *most))};
  if (gpus.fewest == 0) return std::nullopt;
  gpus.option = per_task->type.empty() ? fmt::format("--gres=gpu:{}", gpus.fewest)
                                       : fmt::format("--gres=gpu:{}:{}", per_task->type, gpus.fewest);
  return gpus;
}

std::string StepNote(const std::vector<std::string>& dropped, const std::optional<StepGpus>& gpus) {
  std::string line = fmt::format(
      "srun step: one task on each node, holding every CPU, GPU and the memory the job has there "
      "({}{}{} --overlap)",
      fmt::join(kFixed, " "), gpus ? " " : "", gpus ? gpus->option : "");
  if (gpus) line += fmt::format("; {}: {}", gpus->option, gpus->reason);
  if (gpus && gpus->fewest != gpus->most)
    line += fmt::format("; the nodes hold {} to {} of the job's GPUs, and one step asks for as many on every node: {} each",
                        gpus->fewest, gpus->most, gpus->fewest);
  if (!dropped.empty())
    line += fmt::format("; not passed on to it, the job's own per-task requests: {}", fmt::join(dropped, ", "));
  return line;
}

}  // namespace topolaunch
