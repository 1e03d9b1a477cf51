// Slurm host lists: "node[01-04,07],gpu-[1-2]" <-> one name per host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topolaunch/result.h"

namespace topolaunch {

/// Expands a Slurm host-list expression exactly as Slurm 22.05's `scontrol
/// show hostnames` does (order kept, duplicates kept; "" gives no names).
/// Errors (kBadInput) name the expression and the offending part: whatever
/// scontrol refuses, and on purpose also what scontrol would turn into names
/// nobody meant -- characters other than letters, digits, '-', '.', '_' in a
/// name, unbalanced or nested brackets, junk inside brackets, numbers of
/// 2^64-1 and more -- and more than kMaxExpandedHosts names in all (counted
/// before any name is made). See hostlist.cc for the details.
Result<std::vector<std::string>> ExpandHostList(std::string_view expression);

/// Compresses names exactly as `scontrol show hostlist a,b,c` does: no
/// sorting, no deduplication, runs merged only with the range before
/// ("n3,n1,n2" -> "n[3,1-2]"). ExpandHostList() of the result gives `hosts`
/// back when they are valid host names.
std::string CompressHostList(const std::vector<std::string>& hosts);

/// For messages and notes: `hosts` in natural order ("n2" before "n10"),
/// repeats dropped, then compressed: "n3,n1,n2,n1" -> "n[1-3]".
std::string HostListForMessages(std::vector<std::string> hosts);

inline constexpr size_t kMaxExpandedHosts = 1'000'000;

}  // namespace topolaunch
