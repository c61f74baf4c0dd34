#pragma once
// Memory the cuda backend hands out: a caching allocator per context and memory space
// (so repeated Buffer allocations of a steady state make no cudaMalloc), and a team of
// host threads that copies pageable memory to and from pinned staging.
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <cuda_runtime.h>

#include "ew/types.hpp"
#include "ew_internal/backend_impl.hpp"  // PointerLocation

namespace ew::detail::cuda {

// Where a raw pointer lives (an operand with MemorySpace::unknown): device, managed, pinned
// (page-locked, registered or mapped host memory) or host (anything CUDA does not know),
// and for device memory the GPU that holds it (where the process sees several; else -1).
// Asked of the driver on every call, never cached: memory freed and allocated again at the
// same address may be of another kind or device, and only the driver knows. One driver call
// (cuPointerGetAttributes with just the attributes that decide it, reached through the
// runtime's entry-point table, so libcuda is never linked) instead of
// cudaPointerGetAttributes, which asks for every attribute of its struct. Never leaves an
// error behind for the next CUDA call to find.
PointerLocation locate(const void* p) noexcept;

// Keeps freed blocks for reuse by a later request of the same size class. A device block
// is reused in the owning context's stream order, so it needs no synchronization; the
// backend hands back pinned and managed blocks only once its stream is idle (the host
// writes those directly). Everything cached is released when an allocation fails (then
// retried once) and when the allocator is destroyed.
class CachingAllocator {
 public:
  using AllocFn = cudaError_t (*)(void**, std::size_t);
  using FreeFn = cudaError_t (*)(void*);
  CachingAllocator(AllocFn alloc, FreeFn free, const char* what) : alloc_(alloc), free_(free), what_(what) {}
  ~CachingAllocator() { release_cached(); }
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(std::size_t bytes);  // throws Error(out_of_memory) with the CUDA error name
  void deallocate(void* p) noexcept;
  void release_cached() noexcept;

 private:
  AllocFn alloc_;
  FreeFn free_;
  const char* what_;
  std::unordered_map<void*, std::size_t> live_;  // block -> its size class
  std::multimap<std::size_t, void*> cached_;      // size class -> free blocks
};

// Parallel memcpy over a list of segments: the calling thread and `threads - 1`
// workers each take an equal share of the bytes; copy() returns when all are done.
// With `streaming_stores` (x86-64) large shares are written with non-temporal stores:
// a staging copy's destination is read next by a copy engine or by the user much
// later, never by this core, so fetching its lines into the cache first (the read for
// ownership of an ordinary store) only spends host memory bandwidth.
class CopyTeam {
 public:
  struct Segment {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  explicit CopyTeam(int threads, bool streaming_stores = true);
  ~CopyTeam();
  CopyTeam(const CopyTeam&) = delete;
  CopyTeam& operator=(const CopyTeam&) = delete;

  void copy(const std::vector<Segment>& segments);

 private:
  void copy_share(int share) const;
  void work(int share);
  void stop() noexcept;  // the workers told to end, and joined

  int shares_;
  bool streaming_stores_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::vector<Segment>* job_ = nullptr;
  std::size_t job_bytes_ = 0;
  unsigned long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace ew::detail::cuda
