// Writes a JSON document straight into a string, in exactly the form
// nlohmann's `dump(indent)` gives the same document (DumpJsonText): the big
// documents (a plan of 100,000 ranks) are written without building a DOM
// first. Strings follow json_text.h's replacement policy: a string of
// printable ASCII is copied as it is, any other goes through nlohmann's own
// escaping, so both forms agree byte for byte whatever the bytes are.
//
//   JsonWriter w(2);
//   w.BeginObject();
//   w.Key("schema").String("topolaunch.plan/1");
//   w.Key("nodes").BeginArray();  ...  w.EndArray();
//   w.EndObject();
//   std::string text = w.Take();
//
// The caller keeps the nesting right (a Key before every member's value,
// every Begin closed); the writer does not check it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

class JsonWriter {
 public:
  /// `indent` spaces per level, as dump(indent); < 0 writes one line as dump(-1).
  explicit JsonWriter(int indent) : indent_(indent) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  /// The next member's name; its value follows.
  JsonWriter& Key(std::string_view name);

  JsonWriter& String(std::string_view value);
  JsonWriter& Int(long long value);
  /// A number as nlohmann writes a double (200.0, 0.1, 1e+300).
  JsonWriter& Number(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  /// A string, or null when it is empty.
  JsonWriter& StringOrNull(std::string_view value) { return value.empty() ? Null() : String(value); }
  JsonWriter& IntOrNull(const std::optional<int>& value) { return value ? Int(*value) : Null(); }
  JsonWriter& Strings(const std::vector<std::string>& values);
  JsonWriter& Ints(const std::vector<int>& values);
  /// A value already written by DumpJsonText(value, indent) with this
  /// writer's indent, as if standing alone: its lines are moved to the
  /// depth it lands at. For the small parts that have a DOM of their own.
  JsonWriter& Dumped(std::string_view text);

  /// Room for `bytes` of text, so a big document's string does not grow by
  /// copies (a page the text never reaches is never touched).
  void Reserve(size_t bytes) { out_.reserve(bytes); }
  /// Hands the text written so far to `sink` each time it reaches `bytes`
  /// (checked as a container closes), so a big document can go out in
  /// pieces while the rest is written; Take() gives what is left at the end.
  void DrainEvery(size_t bytes, std::function<void(std::string)> sink);
  /// The text so far (the whole document once every Begin is closed).
  std::string Take() { return std::move(out_); }

 private:
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  // Before a value (or a key): the comma and line break its place needs.
  void Separate();
  void Newline(size_t depth);
  void Quoted(std::string_view text);

  int indent_;
  std::string out_;
  size_t drain_bytes_ = 0;
  std::function<void(std::string)> sink_;
  // Per open container: whether it has had an element yet.
  std::vector<bool> filled_;
  bool after_key_ = false;
};

}  // namespace topolaunch
