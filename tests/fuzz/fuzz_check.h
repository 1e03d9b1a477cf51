// Shared by the fuzz targets: the input as text, and a check that stops the
// run (a crash libFuzzer records) when a property of the parser fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace topolaunch::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Aborts with `what` when `condition` is false: a property the parser
/// promises (a round trip, a bound) was broken by this input.
inline void Check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

}  // namespace topolaunch::fuzz
