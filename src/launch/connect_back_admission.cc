#include "launch/connect_back_admission.h"

namespace topolaunch {

std::optional<size_t> ConnectionToEvict(const std::vector<WaitingConnection>& waiting, std::string_view source,
                                        const AdmissionLimits& limits) {
  size_t from_source = 0;
  std::optional<size_t> oldest_of_source, oldest;
  for (size_t i = 0; i < waiting.size(); ++i) {
    if (!oldest || waiting[i].since < waiting[*oldest].since) oldest = i;
    if (waiting[i].source != source) continue;
    ++from_source;
    if (!oldest_of_source || waiting[i].since < waiting[*oldest_of_source].since) oldest_of_source = i;
  }
  if (from_source >= limits.per_source && oldest_of_source) return oldest_of_source;
  if (waiting.size() >= limits.total && oldest) return oldest;
  return std::nullopt;
}

}  // namespace topolaunch
