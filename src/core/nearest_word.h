// "Did you mean ...?": the known word nearest a mistyped one, by edit
// distance (insertions, deletions, substitutions, and swaps of two
// neighbours, the commonest typo), with `_` and `-` counted as the same
// (torchrun's --nproc_per_node is our --nproc-per-node). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

/// The candidate nearest `word`, or nullopt when none is near enough to be
/// a likely typo (within a third of the word's length, at least 2; words
/// under 4 characters, `-Q`, only an exact match).
std::optional<std::string> NearestWord(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace topolaunch
