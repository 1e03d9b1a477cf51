#include "launch/known_hosts.h"

#include <fmt/format.h>

#include "core/text_io.h"
#include "launch/ssh_config.h"

namespace topolaunch {

namespace {

std::vector<std::string> SplitPatterns(std::string_view list) {
  std::vector<std::string> patterns;
  for (size_t i = 0; i <= list.size();) {
    size_t comma = list.find(',', i);
    if (comma == std::string_view::npos) comma = list.size();
    if (comma > i) patterns.emplace_back(list.substr(i, comma - i));
    i = comma + 1;
  }
  return patterns;
}

}  // namespace

Result<KnownHostsFile> ParseKnownHosts(std::string_view text, std::string_view file_name) {
  KnownHostsFile file;
  std::vector<Problem> problems;
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    std::vector<std::string_view> words = BlankSeparatedWords(line);
    if (words.empty() || words[0].starts_with('#')) continue;
    KnownHostsEntry entry;
    entry.line = number;
    entry.text = std::string(line);
    size_t first = 0;
    if (words[0].starts_with('@')) {
      entry.marker = words[0];
      first = 1;
      if (entry.marker != "@revoked" && entry.marker != "@cert-authority") {
        problems.push_back({fmt::format("{}:{}", file_name, number),
                            fmt::format("unknown marker {} (OpenSSH knows @revoked and @cert-authority)", entry.marker)});
        continue;
      }
    }
    if (words.size() < first + 3) {
      problems.push_back({fmt::format("{}:{}", file_name, number),
                          "expected host patterns, a key type and a key (e.g. `node1 ssh-ed25519 AAAA...`)"});
      continue;
    }
    entry.patterns = SplitPatterns(words[first]);
    entry.key_type = words[first + 1];
    entry.key_base64 = words[first + 2];
    if (entry.marker == "@revoked") file.revoked.push_back(std::move(entry));
    else if (entry.marker == "@cert-authority") file.authorities.push_back(std::move(entry));
    else file.plain.push_back(std::move(entry));
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return file;
}

bool HostMatchesPatterns(const std::vector<std::string>& patterns, std::string_view host, int port) {
  std::string name = port == 22 ? std::string(host) : fmt::format("[{}]:{}", host, port);
  bool matched = false;
  for (const std::string& pattern : patterns) {
    bool negated = pattern.starts_with('!');
    std::string_view body = std::string_view(pattern).substr(negated ? 1 : 0);
    if (body.starts_with('|') || !GlobMatch(body, name)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

std::string Base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

}  // namespace topolaunch
