#include "launch/run_report.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "core/shell_quote.h"
#include "launch/command.h"
#include "launch/job_env.h"

namespace topolaunch {

namespace {

std::string RankRange(const Plan& plan, const PlanNode& node) {
  if (plan.nproc_per_node <= 1) return fmt::format("{}", node.first_rank);
  return fmt::format("{}-{}", node.first_rank, node.first_rank + plan.nproc_per_node - 1);
}

std::string OutcomeText(const NodeOutcome& outcome) {
  if (!outcome.exit) return "not started";
  std::string text = outcome.exit->Describe();
  if (outcome.stopped) return "stopped (" + text + ")";
  // torchrun reported a failed worker and was stopped after it: its exit
  // (143, TERM) says nothing, the failure does.
  if (!outcome.failure.empty()) return outcome.failure + " (then " + text + ")";
  return text;
}

}  // namespace

std::optional<TorchrunRootCause> FindTorchrunRootCause(const std::deque<std::string>& lines) {
  static const std::regex kRank(R"(^\s*rank\s*:\s*(-?\d+)\s*\(local_rank:\s*(-?\d+)\))");
  static const std::regex kExit(R"(^\s*exitcode\s*:\s*(-?\d+))");
  static const std::regex kFailedLine(R"(failed \(exitcode: (-?\d+)\) local_rank: (-?\d+))");
  auto header = std::find_if(lines.begin(), lines.end(),
                             [](const std::string& line) { return line.find("Root Cause (first observed failure)") != std::string::npos; });
  TorchrunRootCause cause;
  std::smatch match;
  if (header == lines.end()) {
    // Stopped before its report (torch 1.13 waits for the other nodes
    // first): the line it logs when the worker fails says enough.
    for (const std::string& line : lines)
      if (std::regex_search(line, match, kFailedLine)) {
        cause.local_rank = std::stoi(match[2]);
        cause.exit_code = match[1];
        return cause;
      }
    return std::nullopt;
  }
  for (auto it = header; it != lines.end(); ++it) {
    if (cause.rank < 0 && std::regex_search(*it, match, kRank)) {
      cause.rank = std::stoi(match[1]);
      cause.local_rank = std::stoi(match[2]);
    } else if (cause.exit_code.empty() && std::regex_search(*it, match, kExit)) {
      cause.exit_code = match[1];
    }
  }
  if (cause.rank < 0) return std::nullopt;
  return cause;
}

std::vector<std::string> LastWorkerLines(const std::deque<std::string>& lines, size_t count, int failed_rank) {
  if (failed_rank >= 0) {
    std::string label = fmt::format("{}: ", failed_rank);
    std::vector<std::string> own;
    for (const std::string& line : lines)
      if (line.starts_with(label)) own.push_back(line);
    if (!own.empty()) return {own.end() - static_cast<ptrdiff_t>(std::min(count, own.size())), own.end()};
  }
  auto end = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("ERROR:torch.distributed.elastic") || line.find("torch.distributed.elastic.multiprocessing.api:failed") != std::string::npos;
  });
  auto begin = end - std::min<ptrdiff_t>(static_cast<ptrdiff_t>(count), end - lines.begin());
  return {begin, end};
}

std::string FormatPreflightProblems(const std::vector<SessionNode>& nodes,
                                    const std::vector<std::vector<std::string>>& problems) {
  std::string text;
  for (size_t i = 0; i < nodes.size() && i < problems.size(); ++i)
    for (const std::string& problem : problems[i]) text += fmt::format("  {}: {}\n", nodes[i].host, problem);
  return text;
}

std::string FormatRunSummary(const Plan& plan, const SessionReport& report, std::chrono::milliseconds wall) {
  size_t width = 4;
  for (const PlanNode& node : plan.nodes) width = std::max(width, node.host.size());
  std::string text = fmt::format("{:<5} {:<{}} {:<9} {}\n", "node", "host", width, "ranks", "status");
  size_t ok = 0;
  for (size_t i = 0; i < plan.nodes.size() && i < report.nodes.size(); ++i) {
    const NodeOutcome& outcome = report.nodes[i];
    const PlanNode& node = plan.nodes[i];
    bool clean = outcome.exit && !outcome.stopped && outcome.failure.empty() && *outcome.exit == ExitInfo{.exit_code = 0};
    ok += clean ? 1 : 0;
    text += fmt::format("{:<5} {:<{}} {:<9} {}{}\n", node.node_rank, node.host, width, RankRange(plan, node), OutcomeText(outcome),
                        report.first_failure == i ? "   <- first failure" : "");
  }
  if (report.first_failure && *report.first_failure < plan.nodes.size()) {
    size_t i = *report.first_failure;
    const PlanNode& node = plan.nodes[i];
    const NodeOutcome& outcome = report.nodes[i];
    std::optional<TorchrunRootCause> cause = FindTorchrunRootCause(outcome.tail);
    text += fmt::format("first failure: {} (node rank {}, ranks {}): {}", node.host, node.node_rank, RankRange(plan, node),
                        !outcome.exit ? "could not be sent its launch" : OutcomeText(outcome));
    if (cause)
      text += fmt::format("; torchrun's root cause: rank {} (local rank {}) exit code {}",
                          cause->rank >= 0 ? cause->rank : node.first_rank + cause->local_rank, cause->local_rank,
                          cause->exit_code.empty() ? "?" : cause->exit_code);
    text += '\n';
    int failed_rank = !cause ? -1 : cause->rank >= 0 ? cause->rank : node.first_rank + cause->local_rank;
    std::vector<std::string> last = LastWorkerLines(outcome.tail, 10, failed_rank);
    if (!last.empty()) text += fmt::format("last lines of {}:\n", node.host);
    for (const std::string& line : last) text += "  | " + line + "\n";
  }
  std::string verdict = report.interrupted ? "interrupted, every node stopped"
                        : report.first_failure ? "failed, every other node stopped"
                                               : "succeeded";
  text += fmt::format("{} of {} node(s) ok; {}; wall time {:.1f} s\n", ok, plan.nodes.size(), verdict,
                      std::chrono::duration<double>(wall).count());
  return text;
}

std::string FormatDryRun(const Plan& plan, const std::vector<LaunchMessage>& messages) {
  std::string text;
  for (size_t i = 0; i < plan.nodes.size() && i < messages.size(); ++i) {
    const PlanNode& node = plan.nodes[i];
    const Command& command = messages[i].command;
    text += fmt::format("# node rank {}: {} (ranks {})\n", node.node_rank, node.host, RankRange(plan, node));
    if (!command.cwd.empty()) text += "cd " + ShellQuote(command.cwd) + "\n";
    for (const auto& [name, value] : command.env) text += "export " + name + "=" + ShellQuote(DisplayValue(name, value)) + "\n";
    text += ShellJoin(DisplayArguments(command.argv)) + "\n\n";
  }
  return text;
}

}  // namespace topolaunch
