// The environment a job forwards to its nodes: `--env NAME` (the value
// this process has), `--env NAME=VALUE`, and `--env-file FILE` (dotenv
// lines), plus which names hold secrets, so that `--dry-run` and every
// message mask their values. The values themselves only ever travel in the
// agent's stdin message, never in a command line. Pure: the caller passes
// the login environment and the file's text.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launch/job_spec.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// Looks a name up in the login environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// Parses dotenv text: `NAME=VALUE`, optional `export `, `#` comments and
/// blank lines, values in '...' (literal) or "..." (\n, \", \\ escapes).
/// Errors (kBadInput, every line at once, as file:line): no '=', a bad
/// name, an unterminated quote.
Result<EnvList> ParseEnvFile(std::string_view text, std::string_view file_name);

/// `--env` items in order: NAME=VALUE as given, NAME from `lookup`.
/// Errors (kBadUsage naming --env): a bad name, NAME not set here.
Result<EnvList> ParseEnvOptions(const std::vector<std::string>& items, const EnvLookup& lookup);

/// Later entries win; the result keeps each name once, at its first place.
EnvList MergeEnv(const EnvList& base, const EnvList& overrides);

/// True for names that by convention hold secrets, case-insensitive: a
/// word (between '_') that ends with TOKEN, SECRET, PASSWORD, PASSWD,
/// PASSPHRASE, CREDENTIAL(S), PRIVATE, COOKIE, PASS, PWD or APIKEY
/// (`HF_TOKEN`, `SSHPASS`, `MYSQL_PWD`, `WANDB_APIKEY`), or is AUTH, KEY,
/// PAT, DSN or WEBHOOK (`WANDB_API_KEY`, `GITHUB_PAT`, `SENTRY_DSN`; not
/// `MONKEY`, `KEYBOARD_LAYOUT`, `PWD`), or a name holding CONNECTION_STRING,
/// DATABASE_URL or WEBHOOK_URL.
bool IsSecretName(std::string_view name);

/// `text` with the credentials of every URL in it masked
/// (`https://user:****@host`, `https://****@host`) and the values of query
/// parameters with secret names (`?token=****`).
std::string MaskUrlCredentials(std::string_view text);

/// The value for display: "****" for secret names, else the value with URL
/// credentials masked.
std::string DisplayValue(std::string_view name, std::string_view value);

/// A command line for display: the values of options with secret names
/// masked (`--api-key=****`, `--api-key ****`), URL credentials masked.
std::vector<std::string> DisplayArguments(const std::vector<std::string>& argv);

}  // namespace topolaunch
