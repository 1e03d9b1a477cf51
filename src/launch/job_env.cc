#include "launch/job_env.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text_io.h"
#include "launch/command.h"

namespace topolaunch {

namespace {

// The value part of a dotenv line; nullopt for an unterminated quote.
std::optional<std::string> DotenvValue(std::string_view raw) {
  if (raw.empty() || (raw.front() != '\'' && raw.front() != '"')) {
    size_t comment = raw.find(" #");
    return std::string(TrimLine(raw.substr(0, comment)));
  }
  char quote = raw.front();
  std::string value;
  for (size_t i = 1; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == quote) return value;
    if (quote == '"' && c == '\\' && i + 1 < raw.size()) {
      char next = raw[++i];
      value += next == 'n' ? '\n' : next;
    } else {
      value += c;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<EnvList> ParseEnvFile(std::string_view text, std::string_view file_name) {
  EnvList env;
  std::vector<Problem> problems;
  int number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = TrimLine(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    std::string where = fmt::format("{}:{}", file_name, number);
    if (line.starts_with("export ")) line = TrimLine(line.substr(7));
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      problems.push_back({where, "expected NAME=VALUE"});
      continue;
    }
    std::string name(TrimLine(line.substr(0, equals)));
    if (!IsValidEnvName(name)) {
      problems.push_back({where, fmt::format("\"{}\" is not a variable name", name)});
      continue;
    }
    std::optional<std::string> value = DotenvValue(TrimLine(line.substr(equals + 1)));
    if (!value) {
      problems.push_back({where, fmt::format("unterminated quote in the value of {}", name)});
      continue;
    }
    env.emplace_back(std::move(name), std::move(*value));
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return MergeEnv({}, env);
}

Result<EnvList> ParseEnvOptions(const std::vector<std::string>& items, const EnvLookup& lookup) {
  EnvList env;
  std::vector<Problem> problems;
  for (const std::string& item : items) {
    size_t equals = item.find('=');
    std::string name = item.substr(0, equals);
    if (!IsValidEnvName(name)) {
      problems.push_back({"--env", fmt::format("\"{}\" is not a variable name (NAME or NAME=VALUE)", name)});
    } else if (equals != std::string::npos) {
      env.emplace_back(name, item.substr(equals + 1));
    } else if (std::optional<std::string> value = lookup(name)) {
      env.emplace_back(name, *value);
    } else {
      problems.push_back({"--env", fmt::format("{} is not set here, so there is no value to forward", name)});
    }
  }
  if (!problems.empty()) return Error(ErrorCode::kBadUsage, std::move(problems));
  return MergeEnv({}, env);
}

EnvList MergeEnv(const EnvList& base, const EnvList& overrides) {
  EnvList merged;
  auto put = [&merged](const std::pair<std::string, std::string>& entry) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& e) { return e.first == entry.first; });
    if (it == merged.end()) merged.push_back(entry);
    else it->second = entry.second;
  };
  for (const auto& entry : base) put(entry);
  for (const auto& entry : overrides) put(entry);
  return merged;
}

bool IsSecretName(std::string_view name) {
  static constexpr std::string_view kWords[] = {"TOKEN", "SECRET",  "PASSWORD", "PASSWD", "PASSPHRASE",
                                                "CREDENTIAL", "CREDENTIALS", "PRIVATE", "COOKIE", "AUTH", "KEY"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  size_t start = 0;
  while (start <= upper.size()) {
    size_t end = upper.find('_', start);
    if (end == std::string::npos) end = upper.size();
    std::string_view word = std::string_view(upper).substr(start, end - start);
    for (std::string_view secret : kWords)
      if (word == secret || (word.size() > secret.size() && word.ends_with(secret) && secret != "KEY" && secret != "AUTH"))
        return true;
    start = end + 1;
  }
  return false;
}

std::string DisplayValue(std::string_view name, std::string_view value) {
  return IsSecretName(name) ? std::string("****") : std::string(value);
}

}  // namespace topolaunch
