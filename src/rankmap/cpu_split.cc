// Sharing a NUMA node's CPUs fairly, and writing bindings for numactl.
//
// The layout lists PUs (hardware threads) per NUMA node, and the host's core
// and PU counts, but not which PUs form a core. Linux numbers SMT siblings
// one of two ways: offset by the core count (x86: core 0 = PUs 0 and 16), so
// with t threads per core a node's list is t equal runs ("0-7,16-23"); or
// adjacent (POWER, some Arm: core 0 = PUs 0-3). In the first case each run
// is split into equal contiguous pieces and rank j takes piece j of every
// run (rank 0 of 2 on "0-7,16-23" gets "0-3,16-19": four whole cores). In
// every other case the list is cut into units of t consecutive entries (a
// core, when siblings are adjacent) and the units are shared out
// contiguously. Pieces differ by at most one core (or PU); with fewer PUs
// than ranks every rank gets the whole list (shared, and noted).
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "rankmap/bindings.h"

namespace topolaunch {

namespace {

std::vector<std::vector<int>> Runs(const std::vector<int>& cpus) {
  std::vector<std::vector<int>> runs;
  for (int cpu : cpus) {
    if (runs.empty() || runs.back().back() + 1 != cpu) runs.emplace_back();
    runs.back().push_back(cpu);
  }
  return runs;
}

// Piece `j` of `ranks` near-equal contiguous pieces of `list`.
void AppendPiece(const std::vector<int>& list, int ranks, int j, std::vector<int>& out) {
  size_t begin = list.size() * j / ranks, end = list.size() * (j + 1) / ranks;
  out.insert(out.end(), list.begin() + begin, list.begin() + end);
}

}  // namespace

std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int ranks, int threads_per_core) {
  std::vector<std::vector<int>> parts(std::max(ranks, 0));
  if (ranks <= 0) return parts;
  if (cpus.size() < static_cast<size_t>(ranks)) {
    for (auto& p : parts) p = cpus;
    return parts;
  }
  size_t t = static_cast<size_t>(std::max(threads_per_core, 1));
  std::vector<std::vector<int>> runs = Runs(cpus);
  bool sibling_runs = t > 1 && runs.size() == t && runs.front().size() >= static_cast<size_t>(ranks);
  for (const auto& run : runs) sibling_runs = sibling_runs && run.size() == runs.front().size();
  size_t units = (cpus.size() + t - 1) / t;
  for (int j = 0; j < ranks; ++j) {
    if (sibling_runs) {
      for (const auto& run : runs) AppendPiece(run, ranks, j, parts[j]);
      std::sort(parts[j].begin(), parts[j].end());
    } else if (units >= static_cast<size_t>(ranks)) {
      size_t begin = std::min(cpus.size(), units * j / ranks * t), end = std::min(cpus.size(), units * (j + 1) / ranks * t);
      parts[j].assign(cpus.begin() + begin, cpus.begin() + end);
    } else {
      AppendPiece(cpus, ranks, j, parts[j]);
    }
  }
  return parts;
}

std::vector<std::string> NumactlArgs(const RankBinding& binding) {
  if (binding.cpus.empty() && !binding.numa) return {};
  std::vector<std::string> args{"numactl"};
  if (!binding.cpus.empty()) args.push_back("--physcpubind=" + FormatCpuList(binding.cpus));
  if (binding.numa) args.push_back(fmt::format("--membind={}", *binding.numa));
  args.push_back("--");
  return args;
}

Result<std::vector<int>> ParseCudaVisibleDevices(std::string_view text) {
  std::vector<int> out;
  std::vector<Problem> problems;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() : comma + 1;
    int value = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || value < 0) {
      problems.push_back({"CUDA_VISIBLE_DEVICES", fmt::format("\"{}\": expected a GPU index (0, 1, ...); UUIDs and "
                                                              "MIG ids are not supported by plan", item)});
      continue;
    }
    if (std::find(out.begin(), out.end(), value) != out.end())
      problems.push_back({"CUDA_VISIBLE_DEVICES", fmt::format("GPU index {} listed twice", value)});
    out.push_back(value);
  }
  if (!problems.empty()) return Error(ErrorCode::kBadUsage, std::move(problems));
  return out;
}

}  // namespace topolaunch
