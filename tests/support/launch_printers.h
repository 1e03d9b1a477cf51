// Readable GoogleTest output for the launch types.
#pragma once

#include <ostream>

#include "launch/executor.h"

namespace topolaunch {

inline void PrintTo(const ExitInfo& info, std::ostream* os) { *os << info.Describe(); }

}  // namespace topolaunch
