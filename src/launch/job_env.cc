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

namespace {

std::string Upper(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

bool IsSecretName(std::string_view name) {
  // A word that is one of these, or ends with one of the first group
  // (SSHPASS, MYSQLPWD, WANDBAPIKEY, MY_APITOKEN).
  static constexpr std::string_view kEndings[] = {"TOKEN",  "SECRET",  "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                                                  "CREDENTIALS", "PRIVATE", "COOKIE", "PASS",  "PWD",        "APIKEY"};
  static constexpr std::string_view kWords[] = {"AUTH", "KEY", "PAT", "DSN", "WEBHOOK"};
  // Names whose values carry credentials as a whole.
  static constexpr std::string_view kParts[] = {"CONNECTION_STRING", "CONNECTIONSTRING", "DATABASE_URL", "WEBHOOK_URL"};
  std::string upper = Upper(name);
  if (upper == "PWD" || upper == "OLDPWD") return false;  // the shell's folders
  for (std::string_view part : kParts)
    if (upper.find(part) != std::string::npos) return true;
  size_t start = 0;
  while (start <= upper.size()) {
    size_t end = upper.find('_', start);
    if (end == std::string::npos) end = upper.size();
    std::string_view word = std::string_view(upper).substr(start, end - start);
    for (std::string_view secret : kEndings)
      if (word.ends_with(secret)) return true;
    for (std::string_view secret : kWords)
      if (word == secret) return true;
    start = end + 1;
  }
  return false;
}

std::string MaskUrlCredentials(std::string_view text) {
  std::string out;
  size_t pos = 0;
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos; scheme = text.find("://", pos)) {
    size_t authority = scheme + 3;
    size_t authority_end = text.find_first_of("/?#\" \t", authority);
    if (authority_end == std::string_view::npos) authority_end = text.size();
    size_t at = text.rfind('@', authority_end == 0 ? 0 : authority_end - 1);
    out.append(text.substr(pos, authority - pos));
    pos = authority;
    if (at == std::string_view::npos || at < authority || at >= authority_end) continue;
    // user:password@ keeps the user; a lone token@ is masked whole.
    size_t colon = text.find(':', authority);
    if (colon != std::string_view::npos && colon < at) out.append(text.substr(authority, colon + 1 - authority));
    out += "****";
    pos = at;
  }
  out.append(text.substr(pos));
  // Query parameters with secret names: ?token=...&sig=...
  size_t query = out.find('?');
  while (query != std::string::npos) {
    size_t name_start = query + 1;
    size_t equals = out.find('=', name_start);
    size_t next = out.find_first_of("&# \t", name_start);
    if (equals != std::string::npos && (next == std::string::npos || equals < next) &&
        IsSecretName(std::string_view(out).substr(name_start, equals - name_start))) {
      size_t value_end = next == std::string::npos ? out.size() : next;
      out.replace(equals + 1, value_end - equals - 1, "****");
      next = out.find_first_of("&# \t", equals + 1);
    }
    query = next != std::string::npos && out[next] == '&' ? next : std::string::npos;
  }
  return out;
}

std::string DisplayValue(std::string_view name, std::string_view value) {
  return IsSecretName(name) ? std::string("****") : MaskUrlCredentials(value);
}

namespace {

// "api_key" for "--api-key=..." or "--api-key"; "" when not an option.
std::string OptionName(std::string_view argument) {
  if (!argument.starts_with("--") || argument.size() == 2) return "";
  size_t equals = argument.find('=');
  std::string option(argument.substr(2, equals == std::string_view::npos ? equals : equals - 2));
  for (char& c : option)
    if (c == '-') c = '_';
  return option;
}

}  // namespace

std::vector<std::string> DisplayArguments(const std::vector<std::string>& argv) {
  std::vector<std::string> shown;
  bool value_is_secret = false;  // the argument before was `--secret-name` alone
  for (const std::string& argument : argv) {
    std::string option = OptionName(argument);
    size_t equals = argument.find('=');
    if (value_is_secret && option.empty() && argument != "--") shown.push_back("****");
    else if (!option.empty() && equals != std::string::npos && IsSecretName(option))
      shown.push_back(argument.substr(0, equals + 1) + "****");
    else shown.push_back(MaskUrlCredentials(argument));
    value_is_secret = !option.empty() && equals == std::string::npos && IsSecretName(option);
  }
  return shown;
}

}  // namespace topolaunch
