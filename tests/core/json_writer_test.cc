// JsonWriter writes what nlohmann's dump writes for the same document, byte
// for byte: every test builds a document both ways and compares.
#include "core/json_writer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace topolaunch {
namespace {

using ojson = nlohmann::ordered_json;

// Writes `doc` through JsonWriter by walking it, so the writer's output can
// be set against DumpJsonText(doc, indent).
// Containers `dump_at` levels down are handed over as dumped text
// (JsonWriter::Dumped) instead; -1: never.
void Walk(JsonWriter& w, const ojson& doc, int indent = 0, int dump_at = -1) {
  if (dump_at == 0 && doc.is_structured()) {
    w.Dumped(DumpJsonText(doc, indent));
  } else if (doc.is_object()) {
    w.BeginObject();
    for (const auto& [key, value] : doc.items()) {
      w.Key(key);
      Walk(w, value, indent, dump_at - 1);
    }
    w.EndObject();
  } else if (doc.is_array()) {
    w.BeginArray();
    for (const ojson& value : doc) Walk(w, value, indent, dump_at - 1);
    w.EndArray();
  } else if (doc.is_string()) {
    w.String(doc.get_ref<const std::string&>());
  } else if (doc.is_boolean()) {
    w.Bool(doc.get<bool>());
  } else if (doc.is_null()) {
    w.Null();
  } else if (doc.is_number_float()) {
    w.Number(doc.get<double>());
  } else {
    w.Int(doc.get<long long>());
  }
}

std::string Written(const ojson& doc, int indent, int dump_at = -1) {
  JsonWriter w(indent);
  Walk(w, doc, indent, dump_at);
  return w.Take();
}

ojson Sample() {
  ojson doc = ojson::parse(R"({
    "schema": "x/1", "n": -42, "big": 9007199254740993, "t": true, "f": false, "nothing": null,
    "empty_object": {}, "empty_array": [], "nested": [[], {}, [1, [2, {"a": []}]], {"b": {"c": null}}],
    "strings": ["", "plain", "quote \" and backslash \\", "tab\tnew\nline\r", "\u0001\u001f\u007f", "é ü 中 🙂"]
  })");
  doc["bytes"] = ojson::array({std::string("bad \xff byte"), std::string("cut \xe2\x82"), std::string("\xe2\x82" "A"),
                               std::string("\xed\xa0\x80 surrogate"), std::string("\xc0\xaf overlong")});
  doc[std::string("key \xfe with \"odd\" bytes")] = 1;
  return doc;
}

TEST(JsonWriter, PrettyFormIsNlohmannsByteForByte) {
  ojson doc = Sample();
  for (int indent : {2, 4, 0}) EXPECT_EQ(Written(doc, indent), DumpJsonText(doc, indent)) << "indent " << indent;
}

TEST(JsonWriter, OneLineFormIsNlohmannsByteForByte) {
  ojson doc = Sample();
  EXPECT_EQ(Written(doc, -1), DumpJsonText(doc, -1));
}

// Drained in small pieces, the document comes out whole and in order, each
// piece cut where a container closed and none of them empty.
TEST(JsonWriter, DrainsPiecesThatMakeTheWholeDocument) {
  ojson doc = Sample();
  for (size_t bytes : {1, 16, 100, 4096}) {
    std::vector<std::string> pieces;
    JsonWriter w(2);
    w.DrainEvery(bytes, [&](std::string piece) { pieces.push_back(std::move(piece)); });
    Walk(w, doc, 2);
    std::string whole;
    for (const std::string& piece : pieces) {
      EXPECT_GE(piece.size(), bytes);
      EXPECT_TRUE(piece.back() == '}' || piece.back() == ']') << piece;
      whole += piece;
    }
    whole += w.Take();
    EXPECT_EQ(whole, DumpJsonText(doc, 2)) << bytes << "-byte pieces";
    if (bytes < 100) EXPECT_GT(pieces.size(), 5u);
  }
}

TEST(JsonWriter, ScalarsAndEmptyContainersAtTheTop) {
  for (const char* text : {"[]", "{}", "null", "7", "\"s\"", "[[]]", "{\"a\":{}}"}) {
    ojson doc = ojson::parse(text);
    EXPECT_EQ(Written(doc, 2), DumpJsonText(doc, 2)) << text;
  }
}

TEST(JsonWriter, NumbersAreWrittenAsNlohmannWritesDoubles) {
  ojson doc = ojson::parse(R"({"rate": 200.0, "tenth": 0.1, "small": -1.5e-7, "huge": 1e300, "int_like": [3.0, -0.0]})");
  EXPECT_EQ(Written(doc, 2), DumpJsonText(doc, 2));
  EXPECT_NE(Written(doc, -1).find("\"rate\":200.0,"), std::string::npos);
}

// A part with a DOM of its own (a host's layout) is dumped on its own and
// handed over as text: it must land indented as if walked.
TEST(JsonWriter, ADumpedValueLandsAtItsDepth) {
  ojson doc = Sample();
  for (int indent : {2, 4, 0, -1})
    for (int depth : {0, 1, 2, 3})
      EXPECT_EQ(Written(doc, indent, depth), DumpJsonText(doc, indent)) << "indent " << indent << ", dumped at depth " << depth;
}

TEST(JsonWriter, HelpersWriteNullForTheEmptyAndTheAbsent) {
  JsonWriter w(-1);
  w.BeginObject();
  w.Key("a").StringOrNull("");
  w.Key("b").StringOrNull("x");
  w.Key("c").IntOrNull(std::nullopt);
  w.Key("d").IntOrNull(3);
  w.Key("e").Strings({"p", "q"});
  w.Key("f").Ints({});
  w.EndObject();
  EXPECT_EQ(w.Take(), R"({"a":null,"b":"x","c":null,"d":3,"e":["p","q"],"f":[]})");
}

}  // namespace
}  // namespace topolaunch
