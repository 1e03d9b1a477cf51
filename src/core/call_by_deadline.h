// Work that may never return (a driver call or a sysfs read on a sick
// node), waited for until a deadline and no longer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace topolaunch {

/// Runs `work` on a thread of its own and waits for its answer until
/// `deadline`; nullopt when it has not answered by then. That thread is then
/// left behind, detached, owning `work` and what it captured, so the caller
/// should exit soon (with std::_Exit: exit handlers can wait on what it holds).
template <class T>
std::optional<T> CallByDeadline(std::function<T()> work, std::chrono::steady_clock::time_point deadline) {
  struct Handoff {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<T> answer;
  };
  auto handoff = std::make_shared<Handoff>();
  std::thread([handoff, work = std::move(work)] {
    T answer = work();
    std::lock_guard lock(handoff->mutex);
    handoff->answer.emplace(std::move(answer));
    handoff->done.notify_all();
  }).detach();
  std::unique_lock lock(handoff->mutex);
  if (!handoff->done.wait_until(lock, deadline, [&] { return handoff->answer.has_value(); })) return std::nullopt;
  return std::move(handoff->answer);
}

}  // namespace topolaunch
