#include "env/env_templates.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "core/text_io.h"
#include "env/env_names.h"
#include "env/env_rules.h"

namespace topolaunch {

namespace {

bool IsVariableName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'; });
}

// Splits "VALUE   # reason" at the first '#' that follows whitespace.
std::pair<std::string_view, std::string_view> SplitComment(std::string_view rest) {
  for (size_t i = 1; i < rest.size(); ++i)
    if (rest[i] == '#' && (rest[i - 1] == ' ' || rest[i - 1] == '\t'))
      return {TrimLine(rest.substr(0, i)), TrimLine(rest.substr(i + 1))};
  if (!rest.empty() && rest[0] == '#') return {"", TrimLine(rest.substr(1))};
  return {TrimLine(rest), ""};
}

std::optional<std::string> CheckName(std::string_view name, std::string_view value) {
  if (!IsVariableName(name)) return fmt::format("\"{}\" is not a variable name (expected NAME=VALUE)", name);
  if (std::optional<std::string> why = ExplainUnknownName(name))
    return fmt::format("{}: {}; topolaunch emits only variables NCCL, PyTorch or CUDA read", name, *why);
  if (value == kRuleValue && !FindEnvRule(name))
    return fmt::format("{}=@rule, but no rule derives {}; give a value", name, name);
  return std::nullopt;
}

}  // namespace

Result<std::vector<TemplateLine>> ParseEnvTemplate(std::string_view text, std::string_view file_name) {
  std::vector<TemplateLine> lines;
  std::vector<Problem> problems;
  std::set<std::string, std::less<>> seen;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line = TrimLine(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    start = end == std::string_view::npos ? text.size() + 1 : end + 1;
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::string where = fmt::format("{}:{}", file_name, number);
    size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      problems.push_back({where, fmt::format("\"{}\": expected NAME=VALUE  # reason", line)});
      continue;
    }
    std::string_view name = TrimLine(line.substr(0, equals));
    auto [value, reason] = SplitComment(line.substr(equals + 1));
    if (std::optional<std::string> problem = CheckName(name, value)) {
      problems.push_back({where, *problem});
      continue;
    }
    if (!seen.insert(std::string(name)).second) {
      problems.push_back({where, fmt::format("{} is set twice in this file", name)});
      continue;
    }
    lines.push_back({std::string(name), std::string(value), std::string(reason), where});
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return lines;
}

Result<std::vector<TemplateLine>> LoadEnvTemplates(const std::string& dir, FabricKind kind) {
  std::string profile = std::string(FabricKindName(kind)) + ".env";
  if (dir.empty()) {
    for (const EmbeddedTemplate& builtin : BuiltinTemplates())
      if (builtin.file_name == profile) return ParseEnvTemplate(builtin.text, "builtin:" + profile);
    return Error(ErrorCode::kInternal, profile, "not compiled into this binary");
  }
  std::string path = (std::filesystem::path(dir) / profile).string();
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.take_error();
  Result<std::vector<TemplateLine>> lines = ParseEnvTemplate(*text, path);
  if (!lines.ok()) return lines;
  std::string site_path = (std::filesystem::path(dir) / "site.env").string();
  std::error_code ec;
  if (!std::filesystem::exists(site_path, ec)) return lines;
  Result<std::string> site_text = ReadTextFile(site_path);
  if (!site_text.ok()) return site_text.take_error();
  Result<std::vector<TemplateLine>> site = ParseEnvTemplate(*site_text, site_path);
  if (!site.ok()) return site;
  for (TemplateLine& line : *site) {
    auto same = std::find_if(lines->begin(), lines->end(), [&](const TemplateLine& l) { return l.name == line.name; });
    if (same != lines->end()) *same = std::move(line);
    else lines->push_back(std::move(line));
  }
  return lines;
}

}  // namespace topolaunch
