// What the agents' srun step takes from the job around it, and what it does
// not: pure.
//
// srun reads most of its options from the environment too (SLURM_* names,
// Slurm 22.05 to 26.05), and inside an allocation the environment is the
// job's: under `sbatch --ntasks-per-node=8 --gpus-per-task=1 -c 12` it holds
// SLURM_GPUS_PER_TASK=1 and SLURM_CPUS_PER_TASK=12, and srun would give the
// agents' one-task-per-node step one GPU and 12 CPUs a node (23.11 and later
// read SLURM_CPUS_PER_TASK again, and a CPU count turns on --exact), for
// eight workers and their data loaders. The step is not the job's per-task
// shape: it is one task a node holding what the job has there. So srun
// sees none of the variables below, and is told explicitly what must not be
// left to a site's defaults.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

/// The variables srun reads as options that shape a step's tasks,
/// resources, placement or I/O, which the agents' step must not inherit.
std::span<const std::string_view> StepShapingVariables();

/// The options the agents' step always carries besides its nodes and
/// tasks: no MPI plugin (MpiDefault=pmix would put PMIX_* into every
/// worker), no CPU binding of the agent (each rank is bound by
/// `topolaunch bind`), and the whole environment (SLURM_EXPORT_ENV=NONE
/// from `sbatch --export=NONE` would leave the agents without PATH).
std::span<const std::string_view> StepFixedOptions();

/// Of `environment` ("NAME=VALUE" entries, as in environ), those the step
/// does not inherit, in their order.
std::vector<std::string> DroppedForTheStep(const std::vector<std::string>& environment);

/// The GPUs the step asks for when the job asked for them per task
/// (`--gpus-per-task`, or a GPU in `--tres-per-task`): a step that asks for
/// no GPU gets the job's per-task request, which for the one agent task a
/// node is one task's GPUs. The step asks instead for what the job holds
/// on a node, the per-task count times the tasks a node
/// (SLURM_TASKS_PER_NODE), the fewest of any node when they differ.
struct StepGpus {
  std::string option;  ///< "--gres=gpu:N" or "--gres=gpu:TYPE:N"
  int fewest = 0;      ///< per node
  int most = 0;
  std::string reason;  ///< why the step asks, for the note
};
/// nullopt when the job did not ask for GPUs per task, or its counts cannot
/// be read (the step then takes the job's request as Slurm copies it).
std::optional<StepGpus> StepGpuRequest(const std::vector<std::string>& environment);

/// One line for `run`'s notes: what the step asks for, and what of the
/// job's environment it does not take (`dropped`, from DroppedForTheStep).
std::string StepNote(const std::vector<std::string>& dropped, const std::optional<StepGpus>& gpus = std::nullopt);

}  // namespace topolaunch
