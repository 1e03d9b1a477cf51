#include "discover/heap_warmup.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace topolaunch {

namespace {

// Makes the block's pages ready for their first write after the walk. The
// madvise (MADV_POPULATE_WRITE, kernel >= 5.14; wants page-aligned ranges:
// the pages wholly inside) has the kernel fill its page tables in one call
// instead of a fault per page. The writes, one per page, are for a
// hypervisor that shadows the guest's page tables (PVM and other
// shadow-paging VMs): it maps a page on the guest's first access, whatever
// the guest kernel did. On such a VM, 32 MiB populated but not written took
// 45 ms to fill the first time (~5.5 us a page, against 1.7 ms once
// written), and the time from the end of a 4,096-host walk to the end of
// `discover` went from ~47 to ~38 ms with the writes. They are not free
// during the walk on a guest with two vCPUs: another process writing 20 MiB
// this way beside an `ibnetdiscover` walk did not slow it (at nice 19, it
// did, by ~17 ms: so the writes stay on this thread), but discover's own walk
// was 20-30 ms shorter with no warm-up at all in one 14-round session, about
// what the pool saves after it. With idle cores, it is free. Where the
// kernel lacks the madvise, the writes fault the pages in themselves.
void Populate(void* block, size_t bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#endif
  auto* bytes_at = static_cast<volatile unsigned char*>(block);
  for (size_t off = 0; off < bytes; off += page) bytes_at[off] = 0;
}

}  // namespace

size_t HeapWarmup::PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}

HeapWarmup::HeapWarmup() : resident_at_start_(PeakResidentBytes()) {
  // The block list's storage is taken now, below the pool: grown as the
  // pool grows it would sit between two blocks and split what Release frees.
  blocks_.reserve(kCap / kStep);
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThreshold));
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold));
}

bool HeapWarmup::Step() {
  size_t grown = PeakResidentBytes() - resident_at_start_;
  size_t others = grown > PoolBytes() ? grown - PoolBytes() : 0;
  size_t target = std::min(kCap, static_cast<size_t>(static_cast<double>(others) * kRatio));
  if (PoolBytes() + kStep > target) return false;
  void* block = std::malloc(kStep);
  if (!block) return false;
  Populate(block, kStep);
  blocks_.push_back(block);
  return true;
}

void HeapWarmup::Release() {
  // Newest first: each free merges into the top of the heap.
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) std::free(*it);
  blocks_.clear();
}

}  // namespace topolaunch
