#include "launch/binding_within_cgroup.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_io.h"
#include "topolaunch/layout.h"

namespace topolaunch {

namespace {

std::vector<int> ListAfter(std::string_view status, std::string_view key) {
  size_t at = 0;
  while ((at = status.find(key, at)) != std::string_view::npos) {
    if (at == 0 || status[at - 1] == '\n') break;
    at += key.size();
  }
  if (at == std::string_view::npos) return {};
  std::string_view value = status.substr(at + key.size());
  value = TrimLine(value.substr(0, value.find('\n')));
  Result<std::vector<int>> list = ParseCpuList(value, key);
  return list.ok() ? std::move(list).value() : std::vector<int>{};
}

bool Allowed(const std::vector<int>& allowed, int item) {
  return allowed.empty() || std::binary_search(allowed.begin(), allowed.end(), item);
}

}  // namespace

AllowedPlaces ParseAllowedPlaces(std::string_view proc_status) {
  AllowedPlaces places{ListAfter(proc_status, "Cpus_allowed_list:"), ListAfter(proc_status, "Mems_allowed_list:")};
  std::sort(places.cpus.begin(), places.cpus.end());
  std::sort(places.mems.begin(), places.mems.end());
  return places;
}

NarrowedBindings WithinAllowed(const std::vector<BindingEntry>& entries, const AllowedPlaces& allowed) {
  NarrowedBindings out{entries, ""};
  std::vector<int> narrowed, unbound, no_membind;
  for (size_t i = 0; i < out.entries.size(); ++i) {
    BindingEntry& entry = out.entries[i];
    std::vector<int> kept;
    for (int cpu : entry.cpus)
      if (Allowed(allowed.cpus, cpu)) kept.push_back(cpu);
    if (kept.size() != entry.cpus.size()) (kept.empty() ? unbound : narrowed).push_back(static_cast<int>(i));
    entry.cpus = std::move(kept);
    if (entry.numa && !Allowed(allowed.mems, *entry.numa)) {
      entry.numa.reset();
      no_membind.push_back(static_cast<int>(i));
    }
  }
  std::vector<std::string> parts;
  if (!narrowed.empty())
    parts.push_back(fmt::format("local rank(s) {} bound to the part of their CPUs it allows", FormatCpuList(narrowed)));
  if (!unbound.empty())
    parts.push_back(fmt::format("local rank(s) {} not bound to CPUs (it allows none of theirs)", FormatCpuList(unbound)));
  if (!no_membind.empty())
    parts.push_back(fmt::format("local rank(s) {} not bound to memory (their NUMA node is outside it)",
                                FormatCpuList(no_membind)));
  if (!parts.empty())
    out.note = fmt::format("this node's step may use CPUs {} and memory node(s) {} (its cgroup): {}",
                           FormatCpuList(allowed.cpus), FormatCpuList(allowed.mems), fmt::join(parts, "; "));
  return out;
}

}  // namespace topolaunch
