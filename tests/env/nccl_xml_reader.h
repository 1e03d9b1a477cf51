// A reader for the XML subset NCCL's src/graph/xml.cc parser accepts, for
// tests that read topolaunch's NCCL topology files back: elements separated
// by spaces/newlines, attributes separated by one space, double-quoted
// values of at most 254 characters, at most 16 attributes, "/>" directly
// after the last attribute, no declaration, comments or text content.
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
  /// The root element, or nullopt with error() saying where the text broke
  /// NCCL's grammar.
  std::optional<XmlElement> Parse(std::string_view text) {
    text_ = text;
    pos_ = 0;
    SkipSpace();
    std::optional<XmlElement> root = Element();
    SkipSpace();
    if (root && pos_ != text_.size()) return Fail("text after the root element");
    return root;
  }
  const std::string& error() const { return error_; }

 private:
  std::optional<XmlElement> Fail(std::string what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  void SkipSpace() { while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_; }
  std::string Token() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '>' && text_[pos_] != '/' && text_[pos_] != '=' && text_[pos_] != '\n') ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::optional<XmlElement> Element() {
    if (pos_ >= text_.size() || text_[pos_] != '<') return Fail("expected '<'");
    ++pos_;
    XmlElement element;
    element.name = Token();
    if (element.name.empty() || element.name[0] == '?' || element.name[0] == '!') return Fail("expected an element name");
    while (pos_ < text_.size() && text_[pos_] == ' ') {
      ++pos_;
      std::string key = Token();
      if (key.empty() || pos_ + 1 >= text_.size() || text_[pos_] != '=' || text_[pos_ + 1] != '"') return Fail("expected key=\"value\"");
      pos_ += 2;
      size_t end = text_.find('"', pos_);
      if (end == std::string_view::npos) return Fail("unterminated value");
      if (end - pos_ > 254) return Fail("value longer than NCCL's 255-character limit");
      element.attributes.emplace_back(key, std::string(text_.substr(pos_, end - pos_)));
      pos_ = end + 1;
    }
    if (element.attributes.size() > 16) return Fail("more than NCCL's 16 attributes");
    if (text_.substr(pos_, 2) == "/>") { pos_ += 2; return element; }
    if (pos_ >= text_.size() || text_[pos_] != '>') return Fail("expected '>' or '/>'");
    ++pos_;
    for (;;) {
      SkipSpace();
      if (text_.substr(pos_, 2) == "</") {
        pos_ += 2;
        if (Token() != element.name || pos_ >= text_.size() || text_[pos_] != '>') return Fail("mismatched closing tag for " + element.name);
        ++pos_;
        return element;
      }
      std::optional<XmlElement> child = Element();
      if (!child) return std::nullopt;
      element.children.push_back(std::move(*child));
    }
  }
  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace topolaunch::testing
