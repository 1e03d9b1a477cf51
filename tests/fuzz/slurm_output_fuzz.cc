// What Slurm hands `run` inside an allocation: `scontrol show config`
// (SrunPortRange), `scontrol -d -o show job` (the GPUs the job holds) and
// the job's environment (per-task GPUs, SLURM_TASKS_PER_NODE). The input's
// first line goes to every reader as a value, the whole input as scontrol's
// output.
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "launch/job_held_gpus.h"
#include "launch/srun_port_range.h"
#include "launch/srun_step_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  std::string first(text.substr(0, text.find('\n')));
  (void)ParseSrunPortRange(text);
  auto held = ParseHeldGpus(text);
  if (held.ok()) {
    for (const HeldGpus& group : held->nodes) fuzz::Check(group.gpus >= 0, "no group holds fewer than no GPU");
    if (auto step = StepGpusFromHeld(*held)) fuzz::Check(step->fewest > 0 && step->fewest <= step->most, "fewest <= most");
  } else {
    fuzz::Check(!held.error().problems.empty(), "an error names at least one problem");
  }
  for (const std::vector<std::string>& environment :
       {std::vector<std::string>{"SLURM_GPUS_PER_TASK=" + first, "SLURM_TASKS_PER_NODE=2(x3)"},
        std::vector<std::string>{"SLURM_GPUS_PER_TASK=1", "SLURM_TASKS_PER_NODE=" + first},
        std::vector<std::string>{"SLURM_TRES_PER_TASK=" + first, "SLURM_TASKS_PER_NODE=4"}})
    if (auto step = StepGpuRequest(environment)) fuzz::Check(step->fewest > 0 && step->fewest <= step->most, "fewest <= most");
  return 0;
}
