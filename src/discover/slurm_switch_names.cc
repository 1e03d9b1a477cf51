#include "discover/slurm_switch_names.h"

#include <set>

#include <fmt/format.h>

namespace topolaunch {

namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The switch's own name where vendors embed it in the description.
std::string_view OwnName(std::string_view description) {
  if (description.starts_with("MF0;")) {
    std::string_view rest = description.substr(4);
    std::string_view name = Trim(rest.substr(0, rest.find(':')));
    if (!name.empty()) return name;
  }
  // Voltaire: "Voltaire 4036 # NAME" -- one word after " # ".
  if (size_t hash = description.rfind(" # "); hash != std::string_view::npos) {
    std::string_view name = Trim(description.substr(hash + 3));
    if (!name.empty() && name.find_first_of(" \t") == std::string_view::npos) return name;
  }
  return description;
}

bool Keeps(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

std::string GuidHex(Guid guid) { return fmt::format("{:016x}", guid); }

}  // namespace

std::string SlurmSwitchBaseName(std::string_view description) {
  std::string name;
  for (char c : OwnName(description)) {
    if (Keeps(c)) name += c;
    else if (!name.empty() && name.back() != '_') name += '_';
  }
  while (!name.empty() && (name.back() == '_' || name.back() == '-')) name.pop_back();
  size_t start = name.find_first_not_of("-_");
  name = start == std::string::npos ? "" : name.substr(start);
  if (name.size() > kMaxSlurmSwitchName) name.resize(kMaxSlurmSwitchName);
  return name;
}

std::map<Guid, std::string> SlurmSwitchNames(const std::vector<const TopologySwitch*>& switches) {
  std::map<Guid, std::string> base;
  std::map<std::string, int> uses;
  for (const TopologySwitch* s : switches) ++uses[base[s->guid] = SlurmSwitchBaseName(s->name)];
  std::map<Guid, std::string> names;
  std::set<std::string> taken;
  for (const auto& [guid, b] : base) {  // GUID order: the result does not depend on input order
    std::string name = b.empty()      ? "sw-" + GuidHex(guid)
                       : uses[b] > 1  ? b.substr(0, kMaxSlurmSwitchName - 17) + "-" + GuidHex(guid)
                                      : b;
    // Only a description that itself ends in another switch's GUID gets here.
    std::string unique = name;
    for (int n = 2; taken.contains(unique); ++n) {
      std::string suffix = fmt::format("-{}", n);
      unique = name.substr(0, std::min(name.size(), kMaxSlurmSwitchName - suffix.size())) + suffix;
    }
    taken.insert(unique);
    names[guid] = unique;
  }
  return names;
}

}  // namespace topolaunch
