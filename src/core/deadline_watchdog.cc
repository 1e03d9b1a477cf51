#include "core/deadline_watchdog.h"

#include <algorithm>

namespace topolaunch {

DeadlineWatchdog::DeadlineWatchdog(Clock::time_point deadline, std::chrono::milliseconds tick_every,
                                   std::function<void(std::chrono::milliseconds)> tick, std::function<void()> late)
    : tick_(std::move(tick)), late_(std::move(late)) {
  watcher_ = std::thread(&DeadlineWatchdog::Watch, this, Clock::now(), deadline, tick_every);
}

DeadlineWatchdog::~DeadlineWatchdog() { Disarm(); }

void DeadlineWatchdog::Disarm() {
  {
    std::lock_guard lock(mutex_);
    disarmed_ = true;
  }
  disarmed_changed_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void DeadlineWatchdog::Watch(Clock::time_point start, Clock::time_point deadline, std::chrono::milliseconds tick_every) {
  Clock::time_point next_tick = start + tick_every;
  std::unique_lock lock(mutex_);
  while (!disarmed_) {
    Clock::time_point wake = tick_ ? std::min(deadline, next_tick) : deadline;
    if (disarmed_changed_.wait_until(lock, wake, [this] { return disarmed_; })) return;
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      lock.unlock();
      if (late_) late_();
      return;
    }
    if (now >= next_tick) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - start);
      next_tick += tick_every;
      lock.unlock();
      tick_(elapsed);
      lock.lock();
    }
  }
}

}  // namespace topolaunch
