#include "core/json_writer.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace topolaunch {

namespace {

// Bytes nlohmann writes as they are: printable ASCII but the quote and the
// backslash.
bool PlainAscii(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

}  // namespace

void JsonWriter::Newline(size_t depth) {
  if (indent_ < 0) return;
  out_ += '\n';
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (filled_.empty()) return;
  if (filled_.back()) out_ += ',';
  filled_.back() = true;
  Newline(filled_.size());
}

void JsonWriter::Quoted(std::string_view text) {
  if (PlainAscii(text)) {
    out_ += '"';
    out_.append(text);
    out_ += '"';
  } else {
    out_ += DumpJsonText(nlohmann::json(std::string(text)), -1);
  }
}

JsonWriter& JsonWriter::Open(char bracket) {
  Separate();
  out_ += bracket;
  filled_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  bool filled = filled_.back();
  filled_.pop_back();
  if (filled) Newline(filled_.size());
  out_ += bracket;
  if (sink_ && out_.size() >= drain_bytes_) {
    sink_(std::move(out_));
    out_.clear();
    out_.reserve(drain_bytes_ + drain_bytes_ / 4);
  }
  return *this;
}

void JsonWriter::DrainEvery(size_t bytes, std::function<void(std::string)> sink) {
  drain_bytes_ = bytes;
  sink_ = std::move(sink);
}

JsonWriter& JsonWriter::Key(std::string_view name) {
  Separate();
  Quoted(name);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  Quoted(value);
  return *this;
}

JsonWriter& JsonWriter::Int(long long value) {
  Separate();
  fmt::format_to(std::back_inserter(out_), "{}", value);
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  Separate();
  out_ += DumpJsonText(nlohmann::json(value), -1);
  return *this;
}

JsonWriter& JsonWriter::Dumped(std::string_view text) {
  Separate();
  size_t shift = indent_ < 0 ? 0 : filled_.size() * static_cast<size_t>(indent_);
  // Strings are written with their line breaks escaped, so every raw one
  // starts a line of the value's own layout.
  for (size_t start = 0;;) {
    size_t end = text.find('\n', start);
    out_.append(text.substr(start, end == std::string_view::npos ? end : end + 1 - start));
    if (end == std::string_view::npos) break;
    out_.append(shift, ' ');
    start = end + 1;
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::Strings(const std::vector<std::string>& values) {
  BeginArray();
  for (const std::string& v : values) String(v);
  return EndArray();
}

JsonWriter& JsonWriter::Ints(const std::vector<int>& values) {
  BeginArray();
  for (int v : values) Int(v);
  return EndArray();
}

}  // namespace topolaunch
