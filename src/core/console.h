// How every command speaks to a person: errors as "topolaunch: error:
// <where>: <what>" and notes as "topolaunch: note: <text>" on stderr. One
// format for the CLI and for `run`'s stages, which talk while they work.
#pragma once

#include <cstdio>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

/// Writes `text` to `stream` and flushes it. False when that failed (a
/// closed pipe, a full disk); never throws (fmt::print would).
bool PrintTo(std::FILE* stream, std::string_view text);

/// Prints each problem as "topolaunch: error: <where>: <what>" on stderr and
/// returns the exit status SPEC.md assigns to the error's code.
int ReportError(const Error& error);

/// "topolaunch: note: <text>" on stderr.
void Note(std::string_view text);

}  // namespace topolaunch
