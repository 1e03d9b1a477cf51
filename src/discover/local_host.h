// This machine's name as CA descriptions and Slurm spell it.
#pragma once

#include <string>

namespace topolaunch {

/// The kernel's host name up to the first dot ("node017"); "localhost" when
/// it cannot be read.
std::string LocalShortHostName();

}  // namespace topolaunch
