#include "launch/scontrol_query.h"

#include <chrono>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/local_executor.h"
#include "launch/program_search.h"

namespace topolaunch {

Result<std::string> RunScontrol(const std::vector<std::string>& args) {
  std::string scontrol = FindProgram("scontrol");
  if (scontrol.empty()) return Error(ErrorCode::kUnavailable, "scontrol", "not on PATH");
  std::vector<std::string> argv = {scontrol};
  argv.insert(argv.end(), args.begin(), args.end());
  std::mutex mutex;
  std::string out, err;
  LocalExecutor local;
  LaunchRequest request{"", Command{argv}};
  std::vector<StartResult> started = local.StartAll({&request, 1}, [&](size_t, OutputStream stream, std::string_view line) {
    std::lock_guard lock(mutex);
    ((stream == OutputStream::kStdout) ? out : err).append(line).append("\n");
  });
  if (!started[0].ok()) return started[0].take_error();
  std::optional<ExitInfo> ended = (*started[0])->Wait(std::chrono::seconds(10));
  if (!ended) ended = (*started[0])->Stop(std::chrono::milliseconds(500));
  std::lock_guard lock(mutex);
  if (ended->exit_code != 0 || !ended->signal.empty())
    return Error(ErrorCode::kUnavailable, fmt::format("scontrol {}", fmt::join(args, " ")),
                 fmt::format("{}{}{}", ended->Describe(), err.empty() ? "" : ": ", err.substr(0, err.find('\n'))));
  return out;
}

Result<std::optional<PortRange>> QuerySrunPortRange() {
  Result<std::string> config = RunScontrol({"show", "config"});
  if (!config.ok()) return config.take_error();
  return ParseSrunPortRange(*config);
}

Result<JobGpus> QueryHeldGpus(const std::string& job_id) {
  Result<std::string> job = RunScontrol({"-d", "-o", "show", "job", job_id});
  if (!job.ok()) return job.take_error();
  return ParseHeldGpus(*job);
}

}  // namespace topolaunch
