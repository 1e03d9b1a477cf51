// Faulting in the heap that follows a fabric walk, while the walk waits.
//
// After a live walk, discover turns libibnetdisc's fabric into the model and
// writes it out, all on fresh heap: every new page costs the kernel a page
// fault, and on a virtual machine (nested paging) one fault costs 10-15 us,
// about as much as the work done on the page. For a 4,096-host fabric that
// was ~4,000 faults, 60 ms, serial behind a walk that itself only waits on
// SMP round trips. So while the walk runs, the waiting thread grows a pool
// of heap blocks, about `ratio` times what the walk has made resident so far
// (the model and its JSON come to about that), has the kernel populate
// them (MADV_POPULATE_WRITE: one call per block, no fault per page) and
// writes a byte to each page (a shadow-paging hypervisor maps a page only on
// the guest's first access: heap_warmup.cc). On Release the blocks go back
// to malloc's main arena, which keeps them (trimming is raised), and what
// comes after the walk reuses pages that are already there.
//
// Process-wide effects, for the rest of the process: malloc keeps freed
// memory up to `kTrimThreshold` instead of returning it, and serves blocks
// below `kMmapThreshold` from the heap instead of mmap (a block mmap'd
// afresh would be faulted page by page again). Only the `discover` and
// `audit` commands walk, and both end soon after.
#pragma once

#include <cstddef>
#include <vector>

namespace topolaunch {

class HeapWarmup {
 public:
  static constexpr size_t kStep = 2u << 20;           ///< bytes per block
  static constexpr size_t kCap = 128u << 20;          ///< pool ceiling
  static constexpr size_t kTrimThreshold = 256u << 20;
  /// glibc's ceiling for M_MMAP_THRESHOLD on 64-bit (a larger one is refused).
  static constexpr size_t kMmapThreshold = 32u << 20;
  static constexpr double kRatio = 2.0;

  HeapWarmup();
  ~HeapWarmup() { Release(); }
  HeapWarmup(const HeapWarmup&) = delete;
  HeapWarmup& operator=(const HeapWarmup&) = delete;

  /// Grows the pool toward ratio x what the rest of the process (the walk
  /// thread's heap above all) has made resident since the warm-up began, one
  /// block per call at most, so the caller can keep polling. Returns whether
  /// it grew. Reads the peak resident size (getrusage: one cheap system
  /// call; mallinfo2, which walks every arena's free lists, cost ~250 us a
  /// call against a walk's heap).
  bool Step();
  /// Frees every block into malloc's main arena (kept there, populated).
  void Release();
  /// Bytes in the pool now.
  size_t PoolBytes() const { return blocks_.size() * kStep; }

 private:
  static size_t PeakResidentBytes();

  size_t resident_at_start_;
  std::vector<void*> blocks_;
};

}  // namespace topolaunch
