// JSON text stays valid UTF-8 whatever the bytes: replacement for documents,
// lossless hex for values that must arrive byte for byte.
#include "core/json_text.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

struct Utf8Case {
  const char* name;
  std::string bytes;
  bool valid;
  std::string replaced;
};

TEST(JsonText, ValidatesAndReplacesUtf8ByteByByte) {
  const std::string r = "\xEF\xBF\xBD";
  const Utf8Case cases[] = {
      {"ascii", "node017 mlx5_0", true, "node017 mlx5_0"},
      {"two-byte", "caf\xC3\xA9", true, "caf\xC3\xA9"},
      {"four-byte", "\xF0\x9F\x98\x80", true, "\xF0\x9F\x98\x80"},
      {"latin-1 byte", "caf\xE9", false, "caf" + r},
      {"lone 0xff", "\xFF", false, r},
      {"overlong slash", "\xC0\xAF", false, r + r},
      {"UTF-16 surrogate", "\xED\xA0\x80", false, r + r + r},
      {"past U+10FFFF", "\xF4\x90\x80\x80", false, r + r + r + r},
      {"cut short at the end", "ab\xE2\x82", false, "ab" + r + r},
      {"continuation without lead", "\x80x", false, r + "x"},
      {"NUL is valid", std::string("a\0b", 3), true, std::string("a\0b", 3)},
  };
  for (const Utf8Case& c : cases) {
    EXPECT_EQ(IsValidUtf8(c.bytes), c.valid) << c.name;
    EXPECT_EQ(ToValidUtf8(c.bytes), c.replaced) << c.name;
    EXPECT_TRUE(IsValidUtf8(ToValidUtf8(c.bytes))) << c.name;
  }
}

TEST(JsonText, DumpReplacesWhatNlohmannWouldThrowOn) {
  nlohmann::ordered_json doc{{"description", "caf\xE9 \xFF"}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
  std::string text = DumpJsonText(doc, 2);
  EXPECT_TRUE(IsValidUtf8(text));
  EXPECT_EQ(nlohmann::json::parse(text)["description"], "caf\xEF\xBF\xBD \xEF\xBF\xBD");
}

TEST(JsonText, BytesRoundTripThroughJsonText) {
  const std::string values[] = {"", "train.py", "caf\xC3\xA9", "caf\xE9", "\xFF\xFE", std::string("\0\x01", 2)};
  for (const std::string& v : values) {
    nlohmann::json j = BytesToJson(v);
    EXPECT_EQ(j.is_string(), IsValidUtf8(v)) << v;
    nlohmann::json back = nlohmann::json::parse(DumpJsonText(j, -1));
    std::optional<std::string> bytes = BytesFromJson(back);
    ASSERT_TRUE(bytes.has_value()) << v;
    EXPECT_EQ(*bytes, v);
  }
}

TEST(JsonText, RefusesMalformedBytesObjects) {
  for (const char* text : {R"({"hex":"abc"})", R"({"hex":"zz"})", R"({"hex":1})", R"({"hex":"00","x":1})", "3",
                           "null", "[]"})
    EXPECT_FALSE(BytesFromJson(nlohmann::json::parse(text)).has_value()) << text;
  EXPECT_EQ(BytesFromJson(nlohmann::json::parse(R"({"hex":"C3a9"})")), "\xC3\xA9");
}

}  // namespace
}  // namespace topolaunch
