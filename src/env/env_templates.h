// Fabric profiles as editable files (templates/env/*.env).
//
// Format, one variable a line:
//   NAME=VALUE   # reason
//   NAME=@rule   # topolaunch derives the value (see env_rules.h)
// Blank lines and lines starting with '#' are ignored. A '#' after
// whitespace starts the reason. Each profile is infiniband.env, roce.env or
// tcp.env; an optional site.env in the same folder applies to every profile
// and wins over it. The default profiles are compiled into the binary
// (generated from templates/env at build time), so `--templates DIR` is
// only needed for site changes.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "env/env_facts.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Value of a line whose value comes from a rule.
inline constexpr std::string_view kRuleValue = "@rule";

struct TemplateLine {
  std::string name;
  std::string value;   ///< "@rule" or the literal value
  std::string reason;  ///< the comment after the value, "" when none
  std::string origin;  ///< "infiniband.env:7" or "/etc/topolaunch/env/site.env:3"
  bool operator==(const TemplateLine&) const = default;
};

/// Parses one template. Every problem is reported at once, `where` being
/// "file_name:line": malformed lines, duplicate names, names NCCL/PyTorch do
/// not read (with the right name when there is one), "@rule" for a variable
/// no rule decides. kBadInput.
Result<std::vector<TemplateLine>> ParseEnvTemplate(std::string_view text, std::string_view file_name);

/// A template compiled into the binary.
struct EmbeddedTemplate {
  std::string_view file_name;  ///< "infiniband.env"
  std::string_view text;
};

/// The templates/env files as they were at build time (generated .cc).
std::span<const EmbeddedTemplate> BuiltinTemplates();

/// The profile for `kind` followed by site.env's lines (site wins on equal
/// names). `dir` empty: the built-in copies (no site.env). Errors: kBadInput
/// for a missing profile file in `dir` or a bad line.
Result<std::vector<TemplateLine>> LoadEnvTemplates(const std::string& dir, FabricKind kind);

}  // namespace topolaunch
