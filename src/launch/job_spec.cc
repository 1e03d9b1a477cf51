#include "launch/job_spec.h"

#include <fmt/format.h>

#include "launch/binding_spec.h"
#include "core/shell_quote.h"
#include "launch/command.h"

namespace topolaunch {

std::string MasterAddress(const JobSpec& spec, const Plan& plan) {
  if (!spec.master_addr.empty() || plan.nodes.empty()) return spec.master_addr;
  return plan.nodes.front().host;
}

std::vector<std::string> TorchrunRendezvousArgv(const JobSpec& spec, const Plan& plan, const PlanNode& node) {
  std::vector<std::string> argv = spec.torchrun;
  argv.push_back(fmt::format("--nnodes={}", plan.nodes.size()));
  argv.push_back(fmt::format("--nproc_per_node={}", plan.nproc_per_node));
  argv.push_back(fmt::format("--node_rank={}", node.node_rank));
  argv.push_back("--master_addr=" + MasterAddress(spec, plan));
  argv.push_back(fmt::format("--master_port={}", spec.master_port));
  argv.push_back("--rdzv_backend=static");
  return argv;
}

std::vector<std::string> TorchrunArgv(const JobSpec& spec, const Plan& plan, const PlanNode& node) {
  std::vector<std::string> argv = TorchrunRendezvousArgv(spec, plan, node);
  argv.push_back("--no_python");
  argv.insert(argv.end(), {spec.topolaunch, "bind", "--", spec.python, spec.script});
  argv.insert(argv.end(), spec.script_args.begin(), spec.script_args.end());
  return argv;
}

std::string FormatPlanTorchrunLines(const Plan& plan, int master_port) {
  JobSpec spec;
  spec.master_port = master_port;
  std::string out;
  for (const PlanNode& node : plan.nodes) out += node.host + "\t" + ShellJoin(TorchrunRendezvousArgv(spec, plan, node)) + "\n";
  return out;
}

LaunchMessage NodeLaunchMessage(const JobSpec& spec, const Plan& plan, const PlanNode& node, EnvList env) {
  bool bound = false;
  for (const RankBinding& rank : node.local) bound = bound || !rank.cpus.empty() || rank.numa;
  if (bound) env.emplace_back(kBindingsEnvName, FormatBindingSpec(node.local));
  LaunchMessage message;
  message.command = Command{TorchrunArgv(spec, plan, node), std::move(env), spec.cwd};
  message.grace = spec.grace;
  message.heartbeat = spec.heartbeat;
  message.rank_output = true;
  return message;
}

Result<std::vector<std::string>> SplitCommandWords(std::string_view text, std::string_view what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word += c;
    } else if (quote == '"') {
      if (c == '"') quote = 0;
      else if (c == '\\' && i + 1 < text.size() && std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos)
        word += text[++i];
      else word += c;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      in_word = true;
      if (c == '\'' || c == '"') quote = c;
      else if (c == '\\' && i + 1 < text.size()) word += text[++i];
      else word += c;
    }
  }
  if (quote) return Error(ErrorCode::kBadUsage, std::string(what), fmt::format("unterminated {} quote in \"{}\"", quote, text));
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return Error(ErrorCode::kBadUsage, std::string(what), "the command is empty");
  return words;
}

}  // namespace topolaunch
