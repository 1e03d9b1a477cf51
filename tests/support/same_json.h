// Whether two nlohmann values are the same value of the same types all the
// way down: nlohmann's == takes 1, 1u and 1.0 for one value, and -0.0 for
// 0.0. For checks that one parser gives exactly what another gives.
#pragma once

#include <nlohmann/json.hpp>

namespace topolaunch::testing {

inline bool SameJson(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
      if (ia.key() != ib.key() || !SameJson(*ia, *ib)) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!SameJson(a[i], b[i])) return false;
    return true;
  }
  if (a.is_number_float()) return a.dump() == b.dump();
  return a == b;
}

}  // namespace topolaunch::testing
