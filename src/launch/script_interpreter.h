// Which Python a program runs under, read from its first bytes.
//
// `run` starts the script with the interpreter torchrun itself runs under,
// as plain `torchrun train.py` does: that is where torch is installed (a
// venv, conda, Debian's /usr/bin/python3), while the first `python3` on the
// nodes' PATH may be another one without torch.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

/// The interpreter the program at `path` starts, from `head` (its first
/// bytes, 4 KiB are enough):
///   - `#!/opt/venv/bin/python3 -E`      -> /opt/venv/bin/python3
///   - `#!/usr/bin/env [-S] python3 ...` -> find("python3") (the PATH search)
///   - pip's launcher for paths too long for `#!` (`#!/bin/sh`, then
///     `'''exec' "/long/path/python" "$0" "$@"`) -> that path
///   - a binary program named python* (`--torchrun 'python3 -m torch.distributed.run'`) -> `path`
/// Errors (kUnavailable) say why no interpreter could be told.
Result<std::string> InterpreterOf(std::string_view path, std::string_view head,
                                  const std::function<std::string(const std::string&)>& find);

}  // namespace topolaunch
