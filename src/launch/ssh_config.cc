#include "launch/ssh_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits into words; "quoted words" keep their spaces.
std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    std::string word;
    if (s[i] == '"') {
      size_t end = s.find('"', i + 1);
      if (end == std::string_view::npos) end = s.size();
      word = s.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) word += s[i++];
    }
    words.push_back(word);
  }
  return words;
}

std::string Expand(std::string_view value, std::string_view home, std::string_view host, std::string_view user,
                   std::string_view local_user) {
  std::string out;
  if (value.substr(0, 2) == "~/") {
    out = home;
    value.remove_prefix(1);
  }
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%' || i + 1 == value.size()) {
      out += value[i];
      continue;
    }
    char token = value[++i];
    if (token == 'd') out += home;
    else if (token == 'h') out += host;
    else if (token == 'r') out += user;
    else if (token == 'u') out += local_user;
    else if (token == '%') out += '%';
    else out += std::string("%") + token;
  }
  return out;
}

bool SameChar(char pattern, char text) {
  return pattern == '?' ||
         std::tolower(static_cast<unsigned char>(pattern)) == std::tolower(static_cast<unsigned char>(text));
}

}  // namespace

// ssh_config's `*` and `?`, matched greedily with one point to return to: a `*` only ever
// moves forward, so a pattern of many stars costs pattern times text steps, never more.
bool GlobMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && SameChar(pattern[p], text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<SshConfig> ParseSshConfig(std::string_view text, std::string_view file_name) {
  SshConfig config;
  config.blocks.push_back({{"*"}, {}, 0});
  std::vector<Problem> problems;
  bool in_match = false;
  int line_number = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    size_t split = line.find_first_of(" \t=");
    std::string key = Lower(line.substr(0, split));
    std::string_view rest = split == std::string_view::npos ? "" : Trim(line.substr(split));
    if (!rest.empty() && rest[0] == '=') rest = Trim(rest.substr(1));
    std::string where = fmt::format("{}:{}", file_name, line_number);
    std::vector<std::string> words = Words(rest);
    if (words.empty()) {
      problems.push_back({where, fmt::format("\"{}\" has no value", key)});
      continue;
    }
    if (key == "host") {
      config.blocks.push_back({words, {}, line_number});
      in_match = false;
    } else if (key == "match") {
      in_match = true;  // conditions we do not evaluate: skip the block
    } else if (!in_match) {
      if (key == "port") {
        int port = 0;
        auto [ptr, ec] = std::from_chars(words[0].data(), words[0].data() + words[0].size(), port);
        if (ec != std::errc() || ptr != words[0].data() + words[0].size() || port < 1 || port > 65535)
          problems.push_back({where, fmt::format("Port \"{}\" is not a port number (1..65535)", words[0])});
      }
      config.blocks.back().settings.emplace_back(key, words[0]);
    }
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return config;
}

bool MatchesHostPatterns(const std::vector<std::string>& patterns, std::string_view host) {
  bool matched = false;
  for (const std::string& pattern : patterns) {
    if (!pattern.empty() && pattern[0] == '!') {
      if (GlobMatch(std::string_view(pattern).substr(1), host)) return false;
    } else if (GlobMatch(pattern, host)) {
      matched = true;
    }
  }
  return matched;
}

SshHostSettings ResolveSshHost(const SshConfig& config, std::string_view host, std::string_view home,
                               std::string_view local_user) {
  SshHostSettings out;
  std::vector<std::string> raw_identities;
  for (const SshConfigBlock& block : config.blocks) {
    if (!MatchesHostPatterns(block.patterns, host)) continue;
    for (const auto& [key, value] : block.settings) {
      if (key == "hostname" && !out.host_name) out.host_name = value;
      if (key == "user" && !out.user) out.user = value;
      if (key == "port" && !out.port) out.port = std::stoi(value);
      if (key == "identityfile") raw_identities.push_back(value);
    }
  }
  std::string user = out.user.value_or(std::string(local_user));
  if (out.host_name) out.host_name = Expand(*out.host_name, home, host, user, local_user);
  for (const std::string& identity : raw_identities)
    out.identity_files.push_back(Expand(identity, home, host, user, local_user));
  return out;
}

std::vector<std::string> KnownHostKeyTypes(std::string_view known_hosts_text, std::string_view host, int port) {
  std::string wanted = port == 22 ? std::string(host) : fmt::format("[{}]:{}", host, port);
  std::vector<std::string> types;
  for (size_t start = 0; start < known_hosts_text.size();) {
    size_t end = known_hosts_text.find('\n', start);
    if (end == std::string_view::npos) end = known_hosts_text.size();
    std::vector<std::string> words = Words(known_hosts_text.substr(start, end - start));
    start = end + 1;
    if (words.size() < 3 || words[0][0] == '#' || words[0][0] == '@' || words[0][0] == '|') continue;
    bool listed = false;
    std::string_view hosts = words[0];
    for (size_t i = 0; i <= hosts.size();) {
      size_t comma = hosts.find(',', i);
      if (comma == std::string_view::npos) comma = hosts.size();
      listed |= hosts.substr(i, comma - i) == wanted;
      i = comma + 1;
    }
    if (listed && std::find(types.begin(), types.end(), words[1]) == types.end()) types.push_back(words[1]);
  }
  return types;
}

}  // namespace topolaunch
