// Which hosts are alike: the rail-count check compares a host only with
// hosts of its own kind, never with the whole fabric.
//
// A fabric carries GPU nodes, storage servers, I/O nodes and a UFM appliance,
// each cabled as designed: a storage server with two HCAs next to GPU nodes
// with four is not sick. Clusters name hosts of one role after one pattern
// (gpu001..gpu221, stor01..stor32, ufm01), so the kind is the host name with
// every run of digits read as one placeholder: "gpu#", "stor#", "dgx-a#-n#".
// A kind with fewer than kMinHostsOfAKind hosts is not judged by majority at
// all (one UFM server, two login nodes); `audit --expected topology.json`
// remains the exact baseline for those.
#pragma once

#include <string>
#include <string_view>

namespace topolaunch {

inline constexpr int kMinHostsOfAKind = 4;

/// "gpu017" -> "gpu#", "dgx-a1-n12" -> "dgx-a#-n#", "login" -> "login".
std::string HostKind(std::string_view name);

}  // namespace topolaunch
