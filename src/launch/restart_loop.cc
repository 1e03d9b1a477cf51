// The attempt loop of `run`. A node lost in an attempt is dropped for the
// rest of the run (written to --failed-hosts, so a job script can drain
// it) and replaced by a spare from the pool: one in its NVLink domain or
// on its leaf first, else the one that keeps the ring's crossings lowest
// (rankmap/spare_choice.h); the next pass plans the new set of nodes from
// scratch, so the order is again at its bounds. A spare that then fails
// the preflight is lost in turn and replaced at once. A worker failure on
// healthy nodes restarts on the same nodes. Each restart waits
// --restart-delay first; Ctrl-C during that wait ends the run with nothing
// running.
#include "launch/restart_loop.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/hostlist.h"
#include "launch/attempt_outcome.h"
#include "rankmap/rank_map.h"
#include "rankmap/spare_choice.h"

namespace topolaunch {

namespace {

// The nodes for the next attempt: `order` with each lost node replaced by a
// spare (or dropped, while more than `min_nodes` remain). An error names
// what was lost when neither works.
Result<std::vector<std::string>> ReplaceLost(const PassResult& r, const std::set<std::string>& failed, size_t min_nodes,
                                             const RestartIo& io) {
  std::optional<FabricGroups> groups;
  if (r.topology && !r.topology->switches.empty()) groups = ComputeFabricGroups(*r.topology);
  std::vector<std::string> nodes = r.order;
  for (const std::string& lost : r.lost) {
    auto at = std::find(nodes.begin(), nodes.end(), lost);
    if (at == nodes.end()) continue;
    std::vector<std::string> spares;
    for (const std::string& h : r.pool) {
      if (failed.contains(h) || std::find(nodes.begin(), nodes.end(), h) != nodes.end()) continue;
      if (groups && !r.allow_unknown && !groups->hosts.contains(h)) continue;  // the plan would refuse it
      spares.push_back(h);
    }
    if (std::optional<std::string> spare = ChooseSpare(groups ? &*groups : nullptr, nodes, lost, spares)) {
      io.note(fmt::format("{} lost: spare {} takes its place", lost, *spare));
      *at = *spare;
    } else if (min_nodes > 0 && nodes.size() > min_nodes) {
      nodes.erase(at);
      io.note(fmt::format("{} lost and no spare left: going on with {} node(s) (--min-nnodes {}); the world size changes",
                          lost, nodes.size(), min_nodes));
    } else {
      return Error(ErrorCode::kUnavailable, "run",
                   fmt::format("{} lost and no spare left in the pool{}", lost,
                               min_nodes > 0 ? fmt::format(" (--min-nnodes {} reached)", min_nodes)
                                             : "; --min-nnodes K lets the job go on with fewer nodes"));
    }
  }
  return nodes;
}

}  // namespace

int RunAttempts(const RestartOptions& options, const RunPass& pass, const RestartIo& io) {
  std::vector<AttemptRecord> attempts;
  std::set<std::string> failed;
  std::optional<Replan> replan;
  PassRequest request;
  auto finish = [&](int status) {
    if (options.max_restarts > 0 && !attempts.empty()) io.print(FormatAttempts(attempts));
    if (!options.failed_hosts.empty()) {
      std::string text;
      for (const std::string& h : NaturalSorted({failed.begin(), failed.end()})) text += h + "\n";
      if (Status written = io.write_file(options.failed_hosts, text); !written.ok()) {
        int code = io.report_error(written.error());
        return status == 0 ? code : status;
      }
    }
    return status;
  };
  for (;;) {
    PassResult r = pass(request);
    if (r.replan) {  // not an attempt: the same nodes, in the order their domains ask for
      replan = std::move(r.replan);
      request.replan = &*replan;
      request.hosts = replan->hosts;
      continue;
    }
    bool preflight_lost = !r.ran && !r.lost.empty();
    if (!r.ran && !preflight_lost) return finish(r.status);  // nothing started: usage, preflight, dry run
    attempts.push_back({request.restart, r.order, r.outcome, r.lasted});
    if (r.ran && r.ranks_per_node && !request.ranks_per_node) request.ranks_per_node = r.ranks_per_node;
    failed.insert(r.lost.begin(), r.lost.end());
    if (r.status == 0 || r.status == 130) return finish(r.status);
    if (!preflight_lost && request.restart >= options.max_restarts) {
      if (options.max_restarts > 0) io.note(fmt::format("--max-restarts {} used up: the job failed", options.max_restarts));
      return finish(r.status);
    }
    size_t min_nodes = options.min_nnodes > 0 ? static_cast<size_t>(options.min_nnodes) : 0;
    Result<std::vector<std::string>> next = ReplaceLost(r, failed, min_nodes, io);
    if (!next.ok()) {  // the job failed: an attempt ran, and what it lost cannot be replaced
      io.report_error(next.error());
      return finish(1);
    }
    if (preflight_lost) {  // a spare failed its preflight: the next one, at once, same restart
      request.hosts = std::move(next).value();
      continue;
    }
    io.note(fmt::format("restart {} of {} in {:g} s, {}: {}", request.restart + 1, options.max_restarts, options.delay_s,
                        r.lost.empty() ? "on the same nodes (a worker failed, every node is healthy)"
                                       : fmt::format("on {} node(s)", next->size()),
                        HostListForMessages(*next)));
    if (!io.wait(std::chrono::milliseconds(static_cast<int64_t>(options.delay_s * 1000)))) {
      io.note("interrupted during the restart delay: nothing is running");
      return finish(130);
    }
    ++request.restart;
    request.hosts = std::move(next).value();
  }
}

}  // namespace topolaunch
