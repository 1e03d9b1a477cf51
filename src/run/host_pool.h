// The host pool of `plan` and `run`: --hostfile, else --hosts, else
// SLURM_JOB_NODELIST, else empty; and the Slurm allocation it runs in (the
// only place the environment is read for either).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch::run {

struct HostPool {
  std::vector<std::string> hosts;  ///< in the user's order; empty: none given
  std::optional<int> slots;        ///< the hostfile's slot count when every entry agrees on one
  std::string slots_disagree;      ///< "a slots=8, b slots=4": the first entries that differ; "" when they agree
  std::string source;              ///< "--hostfile", "--hosts", "SLURM_JOB_NODELIST" or ""
  std::string slurm_job_id;        ///< SLURM_JOB_ID, "" outside an allocation
  std::string allocation_list;     ///< SLURM_JOB_NODELIST as Slurm wrote it, "" when unset
  std::vector<std::string> allocation;  ///< its hosts; empty when unset or unreadable
};

/// Reads the pool. Errors name the file:line or the variable.
Result<HostPool> ReadHostPool(const std::string& hostfile, const std::string& hosts_expression);

/// Without --nproc-per-node the hostfile's slots give the ranks per node,
/// and every node runs as many (torchrun's --nproc_per_node): slots that
/// differ are an error naming the file and the entries (kBadInput), never
/// planned as something else in silence.
Status CheckSlotsAgree(const HostPool& pool, const std::string& hostfile);

}  // namespace topolaunch::run
