#include "launch/job_held_gpus.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text_io.h"

namespace topolaunch {

namespace {

// Entries of a GRES detail, split at commas outside parentheses (an IDX
// list has its own: "gpu:3(IDX:0,2-3)").
std::vector<std::string_view> GresEntries(std::string_view gres) {
  std::vector<std::string_view> entries;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= gres.size(); ++i) {
    if (i == gres.size() || (gres[i] == ',' && depth == 0)) {
      if (i > start) entries.push_back(gres.substr(start, i - start));
      start = i + 1;
    } else if (gres[i] == '(') {
      ++depth;
    } else if (gres[i] == ')') {
      depth = std::max(0, depth - 1);
    }
  }
  return entries;
}

// The GPUs of one entry: "gpu:4(IDX:0-3)", "gpu:a100:4(IDX:0-3)",
// "gpu(CNT:4)"; 0 for another GRES; nullopt when it cannot be read.
std::optional<int> EntryGpus(std::string_view entry) {
  size_t paren = entry.find('(');
  std::string_view head = entry.substr(0, paren);
  if (head.substr(0, head.find(':')) != "gpu") return 0;
  if (paren == std::string_view::npos || !entry.ends_with(")")) return std::nullopt;
  std::string_view inside = entry.substr(paren + 1, entry.size() - paren - 2);
  std::string_view count_text;
  if (inside.starts_with("CNT:"))
    count_text = inside.substr(4);
  else if (inside.starts_with("IDX:") && head.find(':') != std::string_view::npos)
    count_text = head.substr(head.rfind(':') + 1);
  else
    return std::nullopt;
  std::optional<long long> count = DecimalNumber(count_text, 0, 100'000);
  return count ? std::optional<int>(static_cast<int>(*count)) : std::nullopt;
}

}  // namespace

Result<JobGpus> ParseHeldGpus(std::string_view scontrol_out) {
  JobGpus job;
  std::vector<HeldGpus>& held = job.nodes;
  std::string_view rest = scontrol_out;
  while (!rest.empty()) {
    size_t blank = rest.find_first_of(" \t\n");
    std::string_view token = rest.substr(0, blank);
    rest.remove_prefix(blank == std::string_view::npos ? rest.size() : blank + 1);
    if (token.starts_with("TresPer") && token.find("gpu") != std::string_view::npos) {
      job.asked = true;
    } else if (token.starts_with("Nodes=")) {
      held.push_back(HeldGpus{std::string(token.substr(6)), 0});
    } else if (token.starts_with("GRES=") && !held.empty()) {
      for (std::string_view entry : GresEntries(token.substr(5))) {
        std::optional<int> gpus = EntryGpus(entry);
        if (!gpus)
          return Error(ErrorCode::kBadInput, "scontrol show job",
                       fmt::format("nodes {}: GRES entry '{}' is not NAME[:TYPE]:COUNT(IDX:...) or NAME(CNT:COUNT)",
                                   held.back().nodes, entry));
        held.back().gpus += *gpus;
      }
    }
  }
  return job;
}

std::optional<StepGpus> StepGpusFromHeld(const JobGpus& job) {
  const std::vector<HeldGpus>& held = job.nodes;
  if (job.asked || held.empty()) return std::nullopt;
  auto [fewest, most] =
      std::minmax_element(held.begin(), held.end(), [](const HeldGpus& a, const HeldGpus& b) { return a.gpus < b.gpus; });
  if (fewest->gpus == 0) return std::nullopt;
  return StepGpus{fmt::format("--gres=gpu:{}", fewest->gpus), fewest->gpus, most->gpus,
                  "the job holds GPUs it did not ask for (--exclusive allocates every GPU of a node), and a step gets "
                  "only the GPUs a job asked for"};
}

}  // namespace topolaunch
