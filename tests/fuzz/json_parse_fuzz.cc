// The fast JSON path (core/json_fast_parse.h) against nlohmann's parser:
// whatever the fast path accepts, nlohmann reads as the same value, number
// types and all.
#include <nlohmann/json.hpp>

#include "core/json_fast_parse.h"
#include "fuzz/fuzz_check.h"
#include "support/same_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace topolaunch;
  using nlohmann::json;
  using testing::SameJson;
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
