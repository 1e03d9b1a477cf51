// Small statistics shared by the benchmarks.
#pragma once

#include <algorithm>
#include <vector>

namespace topolaunch::bench {

/// The middle value (the upper one of the two for an even count); 0 for none.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace topolaunch::bench
