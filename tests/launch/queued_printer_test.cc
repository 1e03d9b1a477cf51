#include "launch/queued_printer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace topolaunch {
namespace {

using namespace std::chrono_literals;

// A printer that blocks until released, as a terminal that stopped reading.
class StalledPrinter : public LinePrinter {
 public:
  void Line(const NodeLine& line) override {
    size_t node = line.node;
    std::string_view text = line.text;
    std::unique_lock lock(mutex_);
    entered_ = true;
    released_.notify_all();
    released_.wait(lock, [this] { return open_; });
    printed.push_back(std::to_string(node) + ":" + std::string(text));
  }
  void Status(std::string_view text) override {
    std::lock_guard lock(mutex_);
    printed.push_back("status:" + std::string(text));
  }
  void Release() {
    std::lock_guard lock(mutex_);
    open_ = true;
    released_.notify_all();
  }
  // Until the printing thread is inside Line (holding its first line).
  bool WaitEntered() {
    std::unique_lock lock(mutex_);
    return released_.wait_for(lock, 10s, [this] { return entered_; });
  }
  size_t count() {
    std::lock_guard lock(mutex_);
    return printed.size();
  }
  std::vector<std::string> printed;  // read after Finish

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  bool open_ = false;
  bool entered_ = false;
};

TEST(QueuedLinePrinter, AStalledPrinterNeverBlocksTheCallerAndTheLossIsNotedInPlace) {
  StalledPrinter stalled;
  std::vector<std::string> notes;
  std::mutex notes_mutex;
  QueuedLinePrinter queued(stalled, [&](std::string_view note) {
    std::lock_guard lock(notes_mutex);
    notes.emplace_back(note);
  }, /*max_bytes=*/10);
  queued.Line({0, OutputStream::kStdout, {}, "first"});  // taken by the printing thread, which then blocks
  ASSERT_TRUE(stalled.WaitEntered());
  auto start = std::chrono::steady_clock::now();
  queued.Line({0, OutputStream::kStdout, {}, "12345"});  // 5 of 10 bytes queued
  queued.Line({1, OutputStream::kStderr, {}, "67890"});  // 10 of 10
  for (int i = 0; i < 1000; ++i) queued.Line({0, OutputStream::kStdout, {}, "dropped"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << "Line waited for the printer";
  EXPECT_EQ(queued.dropped(), 1000u);
  stalled.Release();
  for (int i = 0; i < 200 && stalled.count() < 3; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(20ms);               // and the note after them
  queued.Line({0, OutputStream::kStdout, {}, "later"});  // printed: there is room again
  queued.Finish();
  queued.Line({0, OutputStream::kStdout, {}, "after finish"});
  EXPECT_EQ(stalled.printed, (std::vector<std::string>{"0:first", "0:12345", "1:67890", "0:later"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].find("1000 output line(s) dropped here"), 0u) << notes[0];
}

TEST(QueuedLinePrinter, ALineLongerThanTheQueueStillPrintsWhenTheQueueIsEmpty) {
  StalledPrinter open;
  open.Release();
  QueuedLinePrinter queued(open, nullptr, 4);
  queued.Line({2, OutputStream::kStdout, {}, "longer than four bytes"});
  queued.Finish();
  EXPECT_EQ(open.printed, (std::vector<std::string>{"2:longer than four bytes"}));
}

TEST(QueuedLinePrinter, AStatusKeepsItsPlaceIsReplacedWhileWaitingAndIsNeverDropped) {
  StalledPrinter stalled;
  QueuedLinePrinter queued(stalled, nullptr, 10);
  queued.Line({0, OutputStream::kStdout, {}, "first"});
  ASSERT_TRUE(stalled.WaitEntered());
  queued.Status("1 of 3 answered");
  queued.Status("2 of 3 answered");  // replaces the one not yet shown
  queued.Line({0, OutputStream::kStdout, {7, 1}, "0123456789"});  // the queue is full now
  queued.Line({0, OutputStream::kStdout, {}, "dropped"});
  queued.Status("");  // still queued: a status is never dropped
  stalled.Release();
  queued.Finish();
  EXPECT_EQ(stalled.printed, (std::vector<std::string>{"0:first", "status:2 of 3 answered", "0:0123456789", "status:"}));
}

}  // namespace
}  // namespace topolaunch
