#include "launch/srun_port_range_query.h"

#include <chrono>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "launch/local_executor.h"
#include "launch/program_search.h"

namespace topolaunch {

Result<std::optional<PortRange>> QuerySrunPortRange() {
  std::string scontrol = FindProgram("scontrol");
  if (scontrol.empty()) return Error(ErrorCode::kUnavailable, "scontrol", "not on PATH");
  std::mutex mutex;
  std::string out, err;
  LocalExecutor local;
  LaunchRequest request{"", Command{{scontrol, "show", "config"}}};
  std::vector<StartResult> started = local.StartAll({&request, 1}, [&](size_t, OutputStream stream, std::string_view line) {
    std::lock_guard lock(mutex);
    ((stream == OutputStream::kStdout) ? out : err).append(line).append("\n");
  });
  if (!started[0].ok()) return started[0].take_error();
  std::optional<ExitInfo> ended = (*started[0])->Wait(std::chrono::seconds(10));
  if (!ended) ended = (*started[0])->Stop(std::chrono::milliseconds(500));
  std::lock_guard lock(mutex);
  if (ended->exit_code != 0 || !ended->signal.empty())
    return Error(ErrorCode::kUnavailable, "scontrol show config",
                 fmt::format("{}{}{}", ended->Describe(), err.empty() ? "" : ": ", err.substr(0, err.find('\n'))));
  return ParseSrunPortRange(out);
}

}  // namespace topolaunch
