// What every subcommand shares: printing errors, writing its data.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch::cli {

/// Writes `text` to `stream` and flushes it. False when that failed (a
/// closed pipe, a full disk); never throws (fmt::print would).
bool PrintTo(std::FILE* stream, std::string_view text);

/// Prints each problem as "topolaunch: error: <where>: <what>" on stderr and
/// returns the exit status SPEC.md assigns to the error's code.
int ReportError(const Error& error);

/// ReportError, then std::_Exit with its status: for a timeout that left a
/// thread blocked in libibumad, hwloc or NVML, whose exit handlers (umad2sim's
/// under ibsim) could wait for it forever. Also the live walk's
/// past_deadline (LiveFabricOptions).
[[noreturn]] void ExitAfterTimeout(const Error& error);

/// "topolaunch: note: <text>" on stderr.
void Note(std::string_view text);

/// Writes `data` to `output_path` atomically, or to stdout when it is empty
/// or "-". Returns an exit status (0, or ReportError's).
int WriteOutput(const std::string& output_path, std::string_view data);

/// Current UTC time in RFC 3339 ("2026-11-29T07:40:00Z").
std::string NowRfc3339();

/// `word` as a user would type it in a shell: as it is when it holds only
/// letters, digits and ._/-+=:,@%, else single-quoted.
std::string ShellWord(std::string_view word);

/// "topolaunch 0.1.0".
std::string VersionString();

}  // namespace topolaunch::cli
