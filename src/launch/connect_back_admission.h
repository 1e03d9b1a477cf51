// Who may wait at the connect-back port before saying who they are. Anyone
// who can reach the port can open connections and say nothing: before, 4,200
// such connections filled every pending slot and no agent got in. Now each
// source address may keep only so many waiting, all sources together only
// so many more, and a newcomer over a limit takes the place of the oldest
// waiting connection of its source (or of all): an agent says hello within
// a round trip of connecting, so the connections that give way are the
// idle ones, and a flood from one machine pushes out only its own. Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

struct WaitingConnection {
  std::string source;  ///< the peer's address
  std::chrono::steady_clock::time_point since;
};

struct AdmissionLimits {
  size_t per_source = 64;  ///< waiting at once from one address
  size_t total = 1024;     ///< waiting at once in all
};

/// The waiting connection (an index into `waiting`) that gives way so a
/// newcomer from `source` can wait too, or nullopt when there is room.
std::optional<size_t> ConnectionToEvict(const std::vector<WaitingConnection>& waiting, std::string_view source,
                                        const AdmissionLimits& limits);

}  // namespace topolaunch
