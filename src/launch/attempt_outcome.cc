#include "launch/attempt_outcome.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/hostlist.h"

namespace topolaunch {

bool NodeLost(const NodeOutcome& outcome) {
  if (!outcome.exit || outcome.stopped || !outcome.failure.empty()) return false;
  // The agent's own exit status is its command's (128+N for signal N): a
  // signal on the agent itself, or no status at all, means the node's side
  // of the launch is gone.
  return outcome.exit->connection_lost || !outcome.exit->signal.empty();
}

AttemptFailure ClassifyFailure(const std::vector<SessionNode>& nodes, const SessionReport& report) {
  AttemptFailure failure;
  for (size_t i = 0; i < report.nodes.size() && i < nodes.size(); ++i)
    if (NodeLost(report.nodes[i])) failure.lost.push_back(i);
  if (!failure.lost.empty()) {
    std::vector<std::string> named;
    for (size_t i : failure.lost) named.push_back(fmt::format("{} ({})", nodes[i].host, report.nodes[i].exit->Describe()));
    failure.what = fmt::format("node(s) lost: {}", fmt::join(named, ", "));
    return failure;
  }
  if (report.first_failure && *report.first_failure < nodes.size()) {
    size_t i = *report.first_failure;
    failure.worker_node = i;
    const NodeOutcome& o = report.nodes.at(i);
    std::string how = !o.failure.empty() ? o.failure : o.exit ? o.exit->Describe() : "did not start";
    failure.what = fmt::format("{}: {}", nodes[i].host, how);
  }
  return failure;
}

std::string FormatAttempts(const std::vector<AttemptRecord>& attempts) {
  std::string out = fmt::format("attempts: {}\n", attempts.size());
  for (const AttemptRecord& a : attempts)
    out += fmt::format("  {:<10} {:>7.1f} s  {}: {}\n", a.restart == 0 ? std::string("first") : fmt::format("restart {}", a.restart),
                       a.lasted.count() / 1000.0, CompressHostList(a.hosts), a.outcome);
  return out;
}

}  // namespace topolaunch
