#include "run/script_words.h"

#include <fmt/format.h>

#include "core/nearest_word.h"

namespace topolaunch::run {

namespace {

constexpr std::string_view kNoArgument = "bBdEiIOPqsSuvx";  // python3's flags that take nothing
constexpr std::string_view kArgument = "XW";                // and those that take the next word
constexpr std::string_view kEndsFlags = "mc";               // -m MODULE, -c CMD: the rest are its arguments
constexpr std::string_view kAllowed = "the interpreter's own flags (-m MODULE, -c CMD, -u, -X OPT, -W ARG, ...)";

Error Unknown(const std::string& word, const std::vector<std::string>& options) {
  std::optional<std::string> near = NearestWord(word, options);
  return Error(ErrorCode::kBadUsage, "run",
               fmt::format("unknown option {} before SCRIPT{}; only {} may stand before SCRIPT, and `run`'s options "
                           "before those (topolaunch run --help)",
                           word, near ? fmt::format(" (did you mean {}?)", *near) : "", kAllowed));
}

}  // namespace

Status CheckScriptWords(const std::vector<std::string>& words, const std::vector<std::string>& options) {
  size_t i = 0;
  while (i < words.size() && words[i].size() > 1 && words[i].starts_with('-')) {
    const std::string& word = words[i];
    if (word.starts_with("--")) return Unknown(word, options);
    bool takes_next = false;
    for (size_t k = 1; k < word.size(); ++k) {
      char flag = word[k];
      bool attached = k + 1 < word.size();  // -mtorch.distributed.run, -Xdev
      if (kEndsFlags.find(flag) != std::string_view::npos) {
        if (!attached && i + 1 >= words.size())
          return Error(ErrorCode::kBadUsage, "run", fmt::format("{} needs its argument (python3 -{} ...)", word, flag));
        return Ok{};
      }
      if (kArgument.find(flag) != std::string_view::npos) {
        takes_next = !attached;
        break;
      }
      if (kNoArgument.find(flag) == std::string_view::npos) return Unknown(word, options);
    }
    if (takes_next && i + 1 >= words.size())
      return Error(ErrorCode::kBadUsage, "run", fmt::format("{} needs its argument", word));
    i += takes_next ? 2 : 1;
  }
  if (i >= words.size())
    return Error(ErrorCode::kBadUsage, "run", "no SCRIPT given (topolaunch run [OPTIONS] SCRIPT [ARGS...])");
  return Ok{};
}

}  // namespace topolaunch::run
