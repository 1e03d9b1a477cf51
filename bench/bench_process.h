// Runs one command for a benchmark and measures it: wall time, CPU
// (user+sys of the whole process tree: wait4 covers every descendant
// waited for) and the peak resident set of any process in it.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace topolaunch::bench {

/// User plus system time of a rusage, in seconds.
inline double CpuSeconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct ProcessFigures {
  double wall = 0, cpu = 0, max_rss_mib = 0;
  int status = -1;  ///< exit status, 128+N for signal N
};

/// Runs `argv` (PATH searched) with stdout into `stdout_path` (created
/// fresh), stderr to /dev/null and `env` set on top of ours.
inline ProcessFigures MeasureProcess(const std::vector<std::string>& argv, const std::string& stdout_path = "/dev/null",
                                     const std::vector<std::pair<std::string, std::string>>& env = {}) {
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null = open("/dev/null", O_WRONLY);
    dup2(out, 1);
    dup2(null, 2);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ProcessFigures f;
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  f.cpu = CpuSeconds(usage);
  f.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return f;
}

}  // namespace topolaunch::bench
