// TOPOLAUNCH_BINDINGS: format, parse, and the numactl command a worker's
// binding turns into.
//
// An unbound rank is written "/" (not ""), so that the text of one unbound
// rank differs from the text of none; the parser accepts "" as unbound too.
// Parsing reports every bad entry at once, each by its local rank.
#include "launch/binding_spec.h"

#include <charconv>

#include <fmt/format.h>

#include "rankmap/bindings.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

// Above any machine's NUMA node count (Linux allows 1024), so a typo cannot
// pass as a node number.
constexpr int kMaxNumaNode = 1 << 16;

std::string EntryWhat(size_t index, std::string_view entry, std::string_view why) {
  return fmt::format("entry {} (local rank {}) \"{}\": {} (expected CPUS/NUMA, e.g. \"0-15/0\")", index, index,
                     entry, why);
}

// One "CPUS/NUMA" entry; the error is the text after the entry's name.
Result<BindingEntry> ParseEntry(std::string_view entry) {
  BindingEntry out;
  if (entry.empty()) return out;
  size_t slash = entry.find('/');
  if (slash == std::string_view::npos || entry.find('/', slash + 1) != std::string_view::npos)
    return Error(ErrorCode::kBadInput, "", "needs exactly one '/'");
  Result<std::vector<int>> cpus = ParseCpuList(entry.substr(0, slash), "");
  if (!cpus.ok()) return Error(ErrorCode::kBadInput, "", cpus.error().problems.front().what);
  out.cpus = std::move(*cpus);
  std::string_view numa = entry.substr(slash + 1);
  if (!numa.empty()) {
    int node = -1;
    auto [end, ec] = std::from_chars(numa.data(), numa.data() + numa.size(), node);
    if (ec != std::errc() || end != numa.data() + numa.size() || node < 0 || node >= kMaxNumaNode)
      return Error(ErrorCode::kBadInput, "", fmt::format("NUMA node \"{}\" is not a number below {}", numa, kMaxNumaNode));
    out.numa = node;
  }
  return out;
}

}  // namespace

std::string FormatBindingSpec(std::span<const RankBinding> ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ';';
    out += FormatCpuList(ranks[i].cpus);
    out += '/';
    if (ranks[i].numa) out += fmt::format("{}", *ranks[i].numa);
  }
  return out;
}

Result<std::vector<BindingEntry>> ParseBindingSpec(std::string_view text) {
  std::vector<BindingEntry> entries;
  std::vector<Problem> problems;
  if (text.empty()) return entries;
  size_t pos = 0;
  while (true) {
    size_t semicolon = text.find(';', pos);
    std::string_view entry = text.substr(pos, semicolon == std::string_view::npos ? std::string_view::npos : semicolon - pos);
    Result<BindingEntry> parsed = ParseEntry(entry);
    if (parsed.ok()) entries.push_back(std::move(*parsed));
    else problems.push_back({std::string(kBindingsEnvName),
                             EntryWhat(entries.size() + problems.size(), entry, parsed.error().problems.front().what)});
    if (semicolon == std::string_view::npos) break;
    pos = semicolon + 1;
  }
  if (!problems.empty()) return Error(ErrorCode::kBadInput, std::move(problems));
  return entries;
}

Result<Command> BoundCommand(std::span<const BindingEntry> entries, int local_rank,
                             const std::vector<std::string>& program, const std::string& numactl) {
  if (program.empty()) return Error(ErrorCode::kBadUsage, "bind", "no program to run");
  if (local_rank < 0 || static_cast<size_t>(local_rank) >= entries.size())
    return Error(ErrorCode::kBadInput, std::string(kBindingsEnvName),
                 entries.empty() ? fmt::format("no entry for local rank {} (LOCAL_RANK): it has none", local_rank)
                                 : fmt::format("no entry for local rank {} (LOCAL_RANK): it has local ranks 0-{}",
                                               local_rank, entries.size() - 1));
  const BindingEntry& entry = entries[static_cast<size_t>(local_rank)];
  Command command;
  if (!numactl.empty()) {
    RankBinding binding;
    binding.cpus = entry.cpus;
    binding.numa = entry.numa;
    command.argv = NumactlArgs(binding);
    if (!command.argv.empty()) command.argv.front() = numactl;
  }
  command.argv.insert(command.argv.end(), program.begin(), program.end());
  return command;
}

bool BindsSomething(const BindingEntry& entry) { return !entry.cpus.empty() || entry.numa.has_value(); }

}  // namespace topolaunch
