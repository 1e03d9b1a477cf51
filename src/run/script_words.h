// What may stand before SCRIPT in `topolaunch run [OPTIONS] SCRIPT [ARGS...]`.
// CLI11 hands over everything from the first word it does not know, so a
// mistyped option became the script: `run --no-gpus -N 2 --dry-run train.py`
// started a real job of `python3 -N 2 --dry-run train.py`. torchrun and srun
// refuse an unknown option; so does `run` now. Before the script only the
// interpreter's own flags may stand (`-m MODULE`, `-c CMD`, `-u`, `-X OPT`,
// `-W ARG`, the other one-letter flags of python3), as they would on
// python3's own command line. Pure.
#pragma once

#include <string>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch::run {

/// Checks `words` (SCRIPT and its arguments, as the parser left them).
/// Errors (kBadUsage, where "run"): the first word before the script that
/// is not one of the interpreter's flags, with the nearest of `options`
/// (the spellings `run` knows) when one is near; a flag missing its
/// argument; no script at all.
Status CheckScriptWords(const std::vector<std::string>& words, const std::vector<std::string>& options);

}  // namespace topolaunch::run
