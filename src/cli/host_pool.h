// The host pool of `plan` and `run`: --hostfile, else --hosts, else
// SLURM_JOB_NODELIST (the only place the environment is read), else empty.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch::cli {

struct HostPool {
  std::vector<std::string> hosts;  ///< in the user's order; empty: none given
  std::optional<int> slots;        ///< the hostfile's slot count when every entry agrees on one
  std::string source;              ///< "--hostfile", "--hosts", "SLURM_JOB_NODELIST" or ""
};

/// Reads the pool. Errors name the file:line or the variable.
Result<HostPool> ReadHostPool(const std::string& hostfile, const std::string& hosts_expression);

}  // namespace topolaunch::cli
