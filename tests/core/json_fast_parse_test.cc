// The fast JSON path gives exactly nlohmann's value (types included) for
// what it accepts, and leaves to nlohmann whatever it is not sure of.
#include "core/json_fast_parse.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/json_checker.h"
#include "support/same_json.h"
#include "support/subprocess.h"
#include "support/test_paths.h"
#include "topolaunch/result.h"

namespace topolaunch {
namespace {

using nlohmann::json;

using testing::SameJson;

// Both parsers on `text`: the fast one must accept it and agree.
void ExpectSame(const std::string& text) {
  json slow = json::parse(text);
  std::optional<json> fast = FastParseJson(text);
  ASSERT_TRUE(fast.has_value()) << "refused: " << text;
  EXPECT_TRUE(SameJson(*fast, slow)) << text << "\n fast: " << fast->dump() << "\n slow: " << slow.dump();
}

TEST(FastParseJson, AgreesWithNlohmannOnEveryKindOfValue) {
  for (const char* text : {
           "{}", "[]", " \t\r\n{ } ", "null", "true", "false", "0", "-0", "7", "-7", "123456789012345678",
           "-123456789012345678", "0.5", "-0.0", "1e3", "1E+3", "2.5e-3", "1.7976931348623157e308", "4.9e-324",
           "0.1", "3.141592653589793238462643383279", "\"\"", "\"plain\"",
           R"("esc \" \\ \/ \b \f \n \r \t")", R"("\u0000 \u001f \u0041 \u00e9 \u20ac \uFFFF")", "\"é ü 中 🙂\"",
           R"({"a": 1, "b": [true, false, null, {"c": {}}], "d": "x"})", R"({"dup": 1, "dup": [2], "z": 0})",
           R"([[[[[[[[[[]]]]]]]]]])", R"({"schema":"topolaunch.topology/1","hosts":[{"name":"n1","hcas":[]}]})"})
    ExpectSame(text);
}

TEST(FastParseJson, LeavesToNlohmannWhatItIsNotSureOf) {
  std::string deep(kFastJsonMaxDepth + 1, '[');
  deep += std::string(kFastJsonMaxDepth + 1, ']');
  for (std::string text : {
           // not JSON at all: nlohmann names the error
           std::string(""), std::string(" "), std::string("{"), std::string("[1,]"), std::string("{\"a\":1,}"),
           std::string("{\"a\" 1}"), std::string("{a:1}"), std::string("01"), std::string("1."), std::string(".5"),
           std::string("+1"), std::string("-"), std::string("1e"), std::string("tru"), std::string("nul"),
           std::string("[1] x"), std::string("\"tab\there\""), std::string("\"a\nb\""), std::string("\"\\x\""),
           std::string("\"\\u12\""), std::string("\"bad \xff\""), std::string("\"cut \xe2\x82\""),
           std::string("\"\xed\xa0\x80\""), std::string("\"\xc0\xaf\""), std::string("\"open"),
           std::string("{\"a\":1}\0", 8), std::string("1e400"),
           // JSON, but nlohmann's own call: surrogates, long integers, a BOM, deep nesting
           std::string(R"("\ud83d\ude42")"), std::string("1234567890123456789"), std::string("\xEF\xBB\xBF{}"),
           deep})
    EXPECT_FALSE(FastParseJson(text).has_value()) << text;
}

TEST(FastParseJson, ParseJsonTextStillNamesErrorsAsNlohmannFindsThem) {
  Result<json> bad = ParseJsonText("{\n  \"a\": [1, 2,]\n}", "t.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().Message().find("t.json:2:"), std::string::npos) << bad.error().Message();
  // What the fast path leaves (a surrogate pair) is still read.
  Result<json> pair = ParseJsonText(R"({"s": "\ud83d\ude42"})", "t.json");
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ((*pair)["s"], "🙂");
}

// Every JSON file the suite carries (real documents and fuzz seeds) takes
// the fast path and reads as nlohmann reads it.
TEST(FastParseJson, EveryJsonFileOfTheSuiteTakesTheFastPath) {
  namespace fs = std::filesystem;
  fs::path data = testing::TestDataDir();
  int files = 0;
  for (const fs::path& root : {data, data.parent_path() / "fuzz" / "corpus"})
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
      SCOPED_TRACE(entry.path().string());
      ExpectSame(testing::ReadFile(entry.path().string()));
      ++files;
    }
  EXPECT_GE(files, 10);
}

}  // namespace
}  // namespace topolaunch
