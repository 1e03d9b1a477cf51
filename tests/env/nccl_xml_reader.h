// A reader for topology XML as NCCL's own parser reads it (NVIDIA/nccl
// src/graph/xml.cc, xmlGetNode/xmlGetToken/xmlGetValue/xmlLoadSub), for
// tests that read topolaunch's NCCL topology files back. Same grammar, so a
// file it takes NCCL takes, and a file it refuses NCCL refuses:
// - between elements only ' ', '\n', '\r'; no declaration, no text; "<!--"
//   comments are skipped;
// - a name ends at ' ', '>', '/', '\n' or '\r'; attributes follow single
//   spaces (two spaces, or a space before "/>", make an empty attribute NCCL
//   ignores); a value is in double or single quotes and at most 253
//   characters (MAX_STR_LEN 255: the closing quote must land before 254);
// - after the attributes '/' then a token then '>' ends an empty element,
//   '>' opens one; a closing tag must name the element it closes;
// - at most 16 attributes are kept (later ones are dropped), at most 640
//   children per element and 256 elements in the file
//   (NCCL_TOPO_XML_MAX_NODES).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topolaunch::testing {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlElement> children;

  std::optional<std::string> Attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes) if (k == key) return v;
    return std::nullopt;
  }
  /// Every descendant (depth first) named `tag`.
  void Collect(std::string_view tag, std::vector<const XmlElement*>& out) const {
    for (const XmlElement& child : children) {
      if (child.name == tag) out.push_back(&child);
      child.Collect(tag, out);
    }
  }
};

class NcclXmlReader {
 public:
  /// The first element of the file, or nullopt with error() saying where the
  /// text broke NCCL's grammar.
  std::optional<XmlElement> Parse(std::string_view text) {
    text_ = text;
    pos_ = 0;
    nodes_ = 0;
    error_.clear();
    std::optional<XmlElement> root;
    for (;;) {
      Node node;
      if (!Next(node)) return std::nullopt;
      if (node.kind == Node::kNone) break;
      if (node.kind == Node::kClose) {
        Fail("closing tag </" + node.element.name + "> with nothing open");
        return std::nullopt;
      }
      if (!Load(node)) return std::nullopt;
      if (!root) root = std::move(node.element);
    }
    if (!root) Fail("no element");
    return root;
  }
  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kMaxValue = 253;
  static constexpr size_t kMaxAttributes = 16;
  static constexpr size_t kMaxSubs = 640;
  static constexpr size_t kMaxNodes = 256;

  struct Node {
    enum Kind { kNone, kOpen, kClose, kSingle } kind = kNone;
    XmlElement element;
  };

  bool Fail(std::string what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }
  bool Get(char& c) {
    if (pos_ >= text_.size()) return Fail("unexpected end of file");
    c = text_[pos_++];
    return true;
  }
  static bool Ends(char c) { return c == ' ' || c == '>' || c == '/' || c == '\n' || c == '\r'; }

  // xmlGetToken: a name up to a terminator, or name=value when `value`.
  bool Token(std::string& name, std::string* value, char& last, bool& had_value) {
    name.clear();
    had_value = false;
    for (;;) {
      char c;
      if (!Get(c)) return false;
      if (c == '=') {
        if (!value) return Fail("unexpected value after " + name);
        had_value = true;
        return Value(*value, last);
      }
      if (Ends(c)) {
        last = c;
        return true;
      }
      name += c;
      if (name.size() > kMaxValue) return Fail("name longer than NCCL's limit");
    }
  }
  // xmlGetValue: a quoted value, then the character after it.
  bool Value(std::string& value, char& last) {
    char quote;
    if (!Get(quote)) return false;
    if (quote != '"' && quote != '\'') return Fail("expected a (double) quote");
    value.clear();
    for (;;) {
      char c;
      if (!Get(c)) return false;
      if (value.size() + 1 > kMaxValue && c != quote) return Fail("value longer than NCCL's 253-character limit");
      if (c == quote) break;
      value += c;
    }
    return Get(last);
  }
  // xmlGetNode.
  bool Next(Node& node) {
    node = Node{};
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
    if (pos_ >= text_.size()) return true;
    if (text_[pos_] != '<') return Fail(std::string("expected '<', got '") + text_[pos_] + "'");
    size_t tag = pos_++;
    char last;
    bool had_value;
    if (!Token(node.element.name, nullptr, last, had_value)) return false;
    if (node.element.name.starts_with("!--")) {
      size_t end = text_.find("-->", tag + 4);
      if (end == std::string_view::npos) return Fail("unterminated comment");
      pos_ = end + 3;
      return Next(node);
    }
    if (node.element.name.empty() && last == '/') {
      node.kind = Node::kClose;
      if (!Token(node.element.name, nullptr, last, had_value)) return false;
      if (last != '>') return Fail("unexpected trailing character in closing tag " + node.element.name);
      return true;
    }
    node.kind = Node::kOpen;
    while (last == ' ') {
      std::string key, value;
      if (!Token(key, &value, last, had_value)) return false;
      if (node.element.attributes.size() < kMaxAttributes) node.element.attributes.emplace_back(key, value);
    }
    // The empty attributes two spaces or " />" make mean nothing to NCCL.
    std::erase_if(node.element.attributes, [](const auto& a) { return a.first.empty(); });
    if (last == '/') {
      node.kind = Node::kSingle;
      std::string ignored;
      if (!Token(ignored, nullptr, last, had_value)) return false;
    }
    if (last != '>') return Fail(std::string("expected '>', got '") + last + "'");
    if (++nodes_ > kMaxNodes) return Fail("more than NCCL's 256 elements");
    return true;
  }
  // xmlLoadSub: the children of an open element up to its closing tag.
  bool Load(Node& head) {
    if (head.kind == Node::kSingle) return true;
    for (;;) {
      Node node;
      if (!Next(node)) return false;
      if (node.kind == Node::kNone) return Fail("unterminated " + head.element.name);
      if (node.kind == Node::kClose) {
        if (node.element.name != head.element.name) return Fail("mismatched closing tag for " + head.element.name);
        return true;
      }
      if (!Load(node)) return false;
      if (head.element.children.size() == kMaxSubs) return Fail("more than NCCL's 640 children");
      head.element.children.push_back(std::move(node.element));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t nodes_ = 0;
  std::string error_;
};

}  // namespace topolaunch::testing
