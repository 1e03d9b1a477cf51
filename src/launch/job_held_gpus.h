// The GPUs a Slurm job holds on its nodes, as `scontrol -d -o show job ID`
// prints them: pure.
//
// A job that asked for no GPU can still hold them: `--exclusive` allocates
// every CPU and every GRES of its nodes (Slurm 22.05 on). A step, though,
// gets only the GRES the job asked for ("except those implicitly requested
// when a job is exclusive", srun(1)), so under ConstrainDevices=yes the
// agents' step of such a job would see no GPU at all. It asks for what the
// job holds instead.
#pragma once

#include <string_view>
#include <vector>

#include "launch/srun_step_env.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// One "Nodes=LIST CPU_IDs=... Mem=... GRES=..." group of the detail: the
/// GPUs each of those nodes holds (every gpu entry of GRES summed:
/// "gpu:4(IDX:0-3)", "gpu:a100:2(IDX:0-1),gpu:v100:1(IDX:2)", and the
/// "gpu(CNT:N)" of GRES without device files).
struct HeldGpus {
  std::string nodes;  ///< the group's host list, as scontrol wrote it
  int gpus = 0;       ///< on each of its nodes
};

/// What `scontrol -d -o show job` says of a job's GPUs.
struct JobGpus {
  std::vector<HeldGpus> nodes;  ///< every node group
  /// The job asked for GPUs (a TresPerJob/Node/Socket/Task field naming
  /// one): Slurm copies that request to a step that asks for none.
  bool asked = false;
};

/// From the job's one line. Errors: kBadInput naming what could not be
/// read.
Result<JobGpus> ParseHeldGpus(std::string_view scontrol_out);

/// The step's request for GPUs the job holds without having asked for
/// them: `--gres=gpu:N`, N the fewest GPUs of any node (one request covers
/// every node of a step). nullopt when the job asked (Slurm gives the step
/// that request: `--gpus=8` spread 6 and 2 is all eight, where gpu:2 a node
/// would be four), when some node holds none (the step could not ask for
/// any), or none is listed.
std::optional<StepGpus> StepGpusFromHeld(const JobGpus& held);

}  // namespace topolaunch
