#include "launch/launcher_choice.h"

#include <fmt/format.h>

namespace topolaunch {

namespace {

Error Refuse(std::string text) { return Error(ErrorCode::kBadUsage, "--launcher", std::move(text)); }

Result<LauncherChoice> Srun(const LauncherFacts& facts, std::string why) {
  if (facts.slurm_job_id.empty())
    return Refuse("srun runs inside a Slurm allocation and SLURM_JOB_ID is not set: start `topolaunch run` under "
                  "salloc or sbatch, or use --launcher ssh");
  if (facts.srun_path.empty()) return Refuse("srun is not on PATH");
  return LauncherChoice{LauncherKind::kSrun, std::move(why)};
}

}  // namespace

Result<LauncherChoice> ChooseLauncher(const LauncherFacts& facts) {
  if (facts.step_tasks > 1)
    return Error(ErrorCode::kBadUsage, "run",
                 fmt::format("this is one of {0} tasks of a Slurm step (SLURM_STEP_NUM_TASKS={0}, as under `srun -N{0} "
                             "topolaunch run ...`): each task would launch the whole job, {0} agents on every node. Start "
                             "`topolaunch run ...` once, from the batch script or the salloc shell: it starts every node's "
                             "agent itself",
                             facts.step_tasks));
  bool own_hosts = facts.hosts_source == "--hosts" || facts.hosts_source == "--hostfile";
  bool any_hosts = !facts.hosts_source.empty();
  const std::string& r = facts.requested;
  if (r == "srun")
    return Srun(facts, fmt::format("srun (--launcher srun): each node's agent is a step of Slurm job {}", facts.slurm_job_id));
  if (r == "ssh") {
    if (!any_hosts) return Refuse("ssh needs hosts: --hosts, --hostfile, or SLURM_JOB_NODELIST inside an allocation");
    return LauncherChoice{LauncherKind::kSsh, fmt::format("ssh (--launcher ssh) to the hosts of {}", facts.hosts_source)};
  }
  if (r == "local") {
    if (own_hosts) return Refuse(fmt::format("local runs on this machine alone; drop {}", facts.hosts_source));
    return LauncherChoice{LauncherKind::kLocal, "local (--launcher local): this machine alone"};
  }
  if (r != "auto") return Refuse(fmt::format("'{}' is not one of auto, ssh, srun, local", r));
  if (!facts.slurm_job_id.empty() && !facts.srun_path.empty())
    return LauncherChoice{LauncherKind::kSrun,
                          fmt::format("srun: inside Slurm job {} (SLURM_JOB_ID), srun is {}; each node's agent is a step of "
                                      "the job (--launcher ssh goes over SSH instead)",
                                      facts.slurm_job_id, facts.srun_path)};
  if (any_hosts) {
    std::string why = !facts.slurm_job_id.empty()
                          ? fmt::format("ssh: SLURM_JOB_ID is set but srun is not on PATH; hosts from {}", facts.hosts_source)
                          : fmt::format("ssh: hosts from {}, outside a Slurm allocation", facts.hosts_source);
    return LauncherChoice{LauncherKind::kSsh, std::move(why)};
  }
  return LauncherChoice{LauncherKind::kLocal, "local: no hosts given and no Slurm allocation: this machine alone"};
}

}  // namespace topolaunch
