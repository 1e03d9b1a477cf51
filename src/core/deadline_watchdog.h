// A watch kept from another thread over work that blocks the caller's own
// thread and cannot be cancelled (a libibnetdisc walk): it says the work is
// alive while it runs, and acts when it runs past its deadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace topolaunch {

class DeadlineWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts the watching thread. Until Disarm, it calls `tick` (may be
  /// empty) every `tick_every` with the time since construction (the
  /// multiple of `tick_every` that came due, whatever the scheduler's
  /// delay), and calls `late` (may be empty) once if the deadline passes.
  /// Both run on the watching thread. Work that cannot be cancelled leaves
  /// `late` nothing to do but end the process (report, then std::_Exit).
  DeadlineWatchdog(Clock::time_point deadline, std::chrono::milliseconds tick_every,
                   std::function<void(std::chrono::milliseconds elapsed)> tick, std::function<void()> late);
  /// Disarms.
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  /// The work is done: stops the watching thread and returns once it has
  /// ended, at once unless a callback is running. No callback runs after.
  void Disarm();

 private:
  void Watch(Clock::time_point start, Clock::time_point deadline, std::chrono::milliseconds tick_every);

  std::function<void(std::chrono::milliseconds)> tick_;
  std::function<void()> late_;
  std::mutex mutex_;
  std::condition_variable disarmed_changed_;
  bool disarmed_ = false;
  std::thread watcher_;  // last: started once the members above exist
};

}  // namespace topolaunch
