// HeapWarmup against glibc's real malloc and the kernel's page faults.
// Under ASan malloc is ASan's (mallinfo2 reads nothing, mallopt does
// nothing): skipped there.
#include "discover/heap_warmup.h"

#include <malloc.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kOwnMalloc = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kOwnMalloc = false;
#else
constexpr bool kOwnMalloc = true;
#endif
#else
constexpr bool kOwnMalloc = true;
#endif

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Allocates and writes `bytes` in one block; returns the faults it took.
long FaultsToFill(size_t bytes) {
  long before = MinorFaults();
  void* block = std::malloc(bytes);
  std::memset(block, 1, bytes);
  // Seen from outside: otherwise the compiler drops the malloc, memset and
  // free as dead, and the count is 0 whatever the heap holds.
  asm volatile("" : : "r"(block) : "memory");
  long faults = MinorFaults() - before;
  std::free(block);
  return faults;
}

TEST(HeapWarmup, GrowsToTwiceWhatOthersHoldAndNoFurther) {
  if (!kOwnMalloc) GTEST_SKIP() << "malloc is the sanitizer's";
  HeapWarmup warmup;
  std::vector<std::vector<char>> others;
  for (int i = 0; i < 6; ++i) others.emplace_back(1u << 20, 'x');  // 6 MiB held elsewhere
  int steps = 0;
  while (warmup.Step()) ++steps;
  EXPECT_GE(warmup.PoolBytes(), 10u << 20);
  EXPECT_LE(warmup.PoolBytes(), 14u << 20);  // 2 x the 6 MiB made resident since it began, and a little
  EXPECT_EQ(static_cast<size_t>(steps) * HeapWarmup::kStep, warmup.PoolBytes());
  EXPECT_FALSE(warmup.Step());  // nothing new held elsewhere: it stays put
  others.emplace_back(4u << 20, 'y');
  EXPECT_TRUE(warmup.Step());   // the walk's heap grew: so does the pool
  warmup.Release();
  EXPECT_EQ(warmup.PoolBytes(), 0u);
}

TEST(HeapWarmup, StopsAtItsCap) {
  if (!kOwnMalloc) GTEST_SKIP() << "malloc is the sanitizer's";
  HeapWarmup warmup;
  std::vector<char> big(HeapWarmup::kCap, 'x');  // others hold as much as the cap: 2x would be over it
  while (warmup.Step()) {
  }
  EXPECT_LE(warmup.PoolBytes(), HeapWarmup::kCap);
  EXPECT_GT(warmup.PoolBytes(), HeapWarmup::kCap - HeapWarmup::kStep - 1);
}

TEST(HeapWarmup, WhatFollowsReleaseFindsItsPagesAlreadyThere) {
  if (!kOwnMalloc) GTEST_SKIP() << "malloc is the sanitizer's";
  constexpr size_t kBytes = 16u << 20;  // 4,096 pages
  HeapWarmup warmup;
  std::vector<char> walk_heap(kBytes, 'x');
  while (warmup.Step()) {
  }
  ASSERT_GE(warmup.PoolBytes(), kBytes);
  warmup.Release();
  // The same block filled afresh costs a fault per page or so; after the
  // warm-up it comes from pages malloc kept, already mapped.
  EXPECT_LT(FaultsToFill(kBytes), 100);
  // For contrast: a block larger than all the heap keeps free (whatever the
  // test binary had freed before, too) needs kBytes of new pages at least,
  // and costs their faults.
  long beyond = FaultsToFill(mallinfo2().fordblks + kBytes);
  EXPECT_GT(beyond, 1000) << "the contrast did not hold: a fresh block was already mapped";
}

}  // namespace
}  // namespace topolaunch
