// The fast JSON path (core/json_fast_parse.h) against nlohmann's parser:
// whatever the fast path accepts, nlohmann reads as the same value, number
// types and all.
#include <nlohmann/json.hpp>

#include "core/json_fast_parse.h"
#include "fuzz/fuzz_check.h"

namespace {

using nlohmann::json;

bool SameJson(const json& a, const json& b) {
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  std::string_view text = fuzz::AsText(data, size);
  std::optional<json> fast = FastParseJson(text);
  if (!fast) return 0;
  json slow;
  try {
    slow = json::parse(text);
  } catch (const json::exception&) {
    fuzz::Check(false, "what the fast path accepts, nlohmann accepts");
  }
  fuzz::Check(SameJson(*fast, slow), "the fast path's value is nlohmann's, number types included");
  return 0;
}
