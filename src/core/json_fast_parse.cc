#include "core/json_fast_parse.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "core/json_text.h"

namespace topolaunch {

namespace {

using nlohmann::json;

class FastParser {
 public:
  explicit FastParser(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<json> Document() {
    json doc;
    SkipSpace();
    if (!Value(doc, 0)) return std::nullopt;
    SkipSpace();
    if (p_ != end_) return std::nullopt;
    return doc;
  }

 private:
  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool Literal(std::string_view word, json value, json& out) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    out = std::move(value);
    return true;
  }

  bool Value(json& out, int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '{': return Object(out, depth + 1);
      case '[': return Array(out, depth + 1);
      case '"': {
        std::string s;
        if (!String(s)) return false;
        out = std::move(s);
        return true;
      }
      case 't': return Literal("true", json(true), out);
      case 'f': return Literal("false", json(false), out);
      case 'n': return Literal("null", json(nullptr), out);
      default: return Number(out);
    }
  }

  // The elements of an object or array from its opening bracket to
  // `close`: `element` reads one (after its leading space) and returns false
  // on anything it does not take; commas between, none trailing.
  template <class ReadElement>
  bool Elements(char close, int depth, ReadElement&& element) {
    if (depth > kFastJsonMaxDepth) return false;
    ++p_;  // the opening bracket
    SkipSpace();
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (!element()) return false;
      SkipSpace();
      if (p_ == end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != close) return false;
      ++p_;
      return true;
    }
  }

  bool Object(json& out, int depth) {
    out = json::object();
    json::object_t& members = *out.get_ptr<json::object_t*>();
    return Elements('}', depth, [&] {
      std::string key;
      if (p_ == end_ || *p_ != '"' || !String(key)) return false;
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      SkipSpace();
      json& slot = members[std::move(key)];  // a repeated key: the later value wins, as in nlohmann
      return Value(slot, depth);
    });
  }

  bool Array(json& out, int depth) {
    out = json::array();
    json::array_t& elements = *out.get_ptr<json::array_t*>();
    return Elements(']', depth, [&] {
      elements.emplace_back();
      return Value(elements.back(), depth);
    });
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // \uXXXX outside the surrogates, as UTF-8; a surrogate (pairs and
  // their errors) is left to nlohmann.
  bool UnicodeEscape(std::string& out) {
    if (end_ - p_ < 4) return false;
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      int h = Hex(p_[i]);
      if (h < 0) return false;
      code = code * 16 + static_cast<unsigned>(h);
    }
    p_ += 4;
    if (code >= 0xD800 && code <= 0xDFFF) return false;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return true;
  }

  // A string from its opening quote; control characters, unknown escapes
  // and bytes that are not well-formed UTF-8 fail, as they do in nlohmann.
  bool String(std::string& out) {
    ++p_;  // '"'
    bool wide = false;  // bytes past ASCII: checked once at the end
    while (true) {
      const char* run = p_;
      while (p_ < end_) {
        unsigned char c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20) break;
        if (c >= 0x80) wide = true;
        ++p_;
      }
      out.append(run, p_);
      if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20) return false;
      if (*p_ == '"') {
        ++p_;
        // Escapes write whole sequences, so checking the result checks the raw bytes.
        return !wide || IsValidUtf8(out);
      }
      ++p_;  // '\\'
      if (p_ == end_) return false;
      char e = *p_++;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
          if (!UnicodeEscape(out)) return false;
          break;
        default: return false;
      }
    }
  }

  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  // RFC 8259's number grammar; integers as nlohmann types them (negative:
  // number_integer, else number_unsigned), longer ones left to nlohmann, as
  // are numbers too large for a double.
  bool Number(json& out) {
    const char* start = p_;
    bool negative = p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !Digit(*p_)) return false;
    if (*p_ == '0') ++p_;
    else
      while (p_ < end_ && Digit(*p_)) ++p_;
    size_t int_digits = static_cast<size_t>(p_ - start) - (negative ? 1 : 0);
    bool is_float = false;
    if (p_ < end_ && *p_ == '.') {
      is_float = true;
      ++p_;
      if (p_ == end_ || !Digit(*p_)) return false;
      while (p_ < end_ && Digit(*p_)) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !Digit(*p_)) return false;
      while (p_ < end_ && Digit(*p_)) ++p_;
    }
    // from_chars: no locale (nlohmann's strtod swaps in the locale's decimal
    // point; both give the correctly rounded double).
    if (!is_float) {
      if (int_digits > 18) return false;
      if (negative) {
        json::number_integer_t value = 0;
        std::from_chars(start, p_, value);
        out = value;
      } else {
        json::number_unsigned_t value = 0;
        std::from_chars(start, p_, value);
        out = value;
      }
      return true;
    }
    double value = 0;
    auto [end, error] = std::from_chars(start, p_, value);
    if (error != std::errc() || end != p_ || !std::isfinite(value)) return false;  // overflow, underflow: nlohmann's call
    out = value;
    return true;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

std::optional<json> FastParseJson(std::string_view text) { return FastParser(text).Document(); }

}  // namespace topolaunch
