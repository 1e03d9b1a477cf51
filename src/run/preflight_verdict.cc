#include "run/preflight_verdict.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/hostlist.h"

namespace topolaunch::run {

std::vector<std::vector<std::string>> JudgeNodes(const PreflightExpectations& expect, const std::vector<SessionNode>& nodes,
                                                 const std::vector<NodePreflight>& preflight) {
  std::vector<std::vector<std::string>> problems(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!preflight[i].failure.empty()) problems[i].push_back(preflight[i].failure);
    else
      problems[i] =
          JudgePreflight(nodes[i].host, *preflight[i].reply, {preflight[i].sent_ms, preflight[i].received_ms}, expect);
  }
  std::vector<std::string> hosts;
  std::vector<const PreflightReply*> replies;
  for (size_t i = 0; i < nodes.size(); ++i) {
    hosts.push_back(nodes[i].host);
    replies.push_back(preflight[i].reply ? &*preflight[i].reply : nullptr);
  }
  std::vector<std::string> same = SameMachineProblems(hosts, replies);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!same[i].empty()) problems[i].push_back(same[i]);
  return problems;
}

size_t CountNotReady(const std::vector<std::vector<std::string>>& problems) {
  size_t bad = 0;
  for (const std::vector<std::string>& node : problems) bad += node.empty() ? 0 : 1;
  return bad;
}

void FillKnownGpuCounts(const Topology& topology, const std::vector<SessionNode>& nodes,
                        std::vector<NodePreflight>& preflight) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const TopologyHost* known = topology.FindHost(nodes[i].host);
    if (PreflightReply* reply = preflight[i].reply ? &*preflight[i].reply : nullptr; reply && !reply->layout && known && known->layout)
      reply->gpus = static_cast<int>(known->layout->gpus.size());
  }
}

std::optional<Result<int>> RanksPerNodeFromReplies(const std::vector<SessionNode>& nodes,
                                                   const std::vector<NodePreflight>& preflight) {
  std::vector<std::string> hosts;
  std::vector<int> gpus;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!preflight[i].failure.empty() || !preflight[i].reply) return std::nullopt;
    hosts.push_back(nodes[i].host);
    gpus.push_back(preflight[i].reply->gpus);
  }
  return RanksPerNodeFromGpus(hosts, gpus);
}

std::string InterpreterNote(const std::vector<SessionNode>& nodes, const std::vector<NodePreflight>& preflight) {
  std::map<std::string, std::vector<std::string>> by_path;
  for (size_t i = 0; i < nodes.size(); ++i) by_path[preflight[i].reply->interpreter].push_back(nodes[i].host);
  std::vector<std::string> parts;
  for (auto& [path, hosts] : by_path) parts.push_back(fmt::format("{} ({})", path, HostListForMessages(hosts)));
  return fmt::format("python: the one torchrun runs under (its #! line): {}; --python chooses another",
                     fmt::join(parts, ", "));
}

}  // namespace topolaunch::run
