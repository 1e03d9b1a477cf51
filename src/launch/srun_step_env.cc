#include "launch/srun_step_env.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

std::string StepNote(const std::vector<std::string>& dropped) {
  std::string line = fmt::format(
      "srun step: one task on each node, holding every CPU and the memory the job has there and the GPUs it asked for "
      "({} --overlap)",
      fmt::join(kFixed, " "));
  if (!dropped.empty())
    line += fmt::format("; not passed on to it, the job's own per-task requests: {}", fmt::join(dropped, ", "));
  return line;
}

}  // namespace topolaunch
