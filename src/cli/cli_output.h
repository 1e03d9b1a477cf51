// What every subcommand shares: printing errors, writing its data.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "core/console.h"  // PrintTo, ReportError, Note: every command's
#include "core/shell_quote.h"  // ShellWord, for the commands our messages suggest
#include "topolaunch/result.h"

namespace topolaunch::cli {

/// ReportError, then std::_Exit with its status: for a timeout that left a
/// thread blocked in libibumad, hwloc or NVML, whose exit handlers (umad2sim's
/// under ibsim) could wait for it forever. Also the live walk's
/// past_deadline (LiveFabricOptions).
[[noreturn]] void ExitAfterTimeout(const Error& error);

/// Writes `data` to `output_path` atomically, or to stdout when it is empty
/// or "-". Returns an exit status (0, or ReportError's).
int WriteOutput(const std::string& output_path, std::string_view data);

/// Current UTC time in RFC 3339 ("2026-11-29T07:40:00Z").
std::string NowRfc3339();

/// The installed env profiles (share/topolaunch/env) when that folder
/// exists, else "" (the profiles built into the binary).
std::string DefaultTemplatesDir();

/// "topolaunch 0.1.0".
std::string VersionString();

}  // namespace topolaunch::cli
