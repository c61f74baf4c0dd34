#include "memory.hpp"

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "cuda_error.hpp"
#include "thread_context.hpp"  // driver_function; the driver's types

namespace ew::detail::cuda {

namespace {

using PointerGetAttributes = CUresult(CUDAAPI*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);

// The driver's cuPointerGetAttributes (its ABI the same since CUDA 7), or null where the runtime
// cannot hand it out.
PointerGetAttributes pointer_get_attributes() noexcept {
  static const auto fn = reinterpret_cast<PointerGetAttributes>(driver_function("cuPointerGetAttributes"));
  return fn;
}

PointerLocation locate_through_runtime(const void* p) noexcept {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  switch (attr.type) {
    case cudaMemoryTypeHost: return {MemorySpace::pinned, -1};
    case cudaMemoryTypeDevice: return {MemorySpace::device, attr.device};
    case cudaMemoryTypeManaged: return {MemorySpace::managed, -1};
    default: return {};
  }
}

// Size classes: multiples of 512 bytes up to 1 MiB, then of 1 MiB, so that nearby
// sizes share blocks and a block wastes little.
std::size_t size_class(std::size_t bytes) {
  const std::size_t step = bytes <= (std::size_t(1) << 20) ? 512 : (std::size_t(1) << 20);
  return (bytes + step - 1) / step * step;
}

// Below this a share stays with memcpy: its destination may still be in cache when
// it is used, and the fence costs more than the traffic saved.
constexpr std::size_t kStreamingMinBytes = std::size_t(256) << 10;

// memcpy with 16-byte non-temporal stores (SSE2, every x86-64): whole 64-byte lines
// leave the write-combining buffers without being read first. The caller fences.
void copy_streaming(char* dst, const char* src, std::size_t bytes) {
#if defined(__x86_64__)
  std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16;
  if (head > bytes) head = bytes;
  std::memcpy(dst, src, head);
  dst += head, src += head, bytes -= head;
  for (; bytes >= 64; dst += 64, src += 64, bytes -= 64) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    const __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    const __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), x0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), x3);
  }
#endif
  std::memcpy(dst, src, bytes);
}

// Non-temporal stores are weakly ordered: they must be visible before the share is
// reported done (and a copy engine or another thread reads the destination).
void fence_streaming_stores() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}
}  // namespace

PointerLocation locate(const void* p) noexcept {
  if (const PointerGetAttributes query = pointer_get_attributes()) {
    // Zeroed 8-byte slots: the driver writes a 4-byte enum and a boolean into them, and an
    // int for the ordinal. The ordinal only where there is another GPU to tell apart: the
    // third attribute cost 0.01-0.04 us a query on an H200 (ew-cuda-expr-bench --call-cost).
    static const bool several_gpus = [] {
      int count = 0;
      if (cudaGetDeviceCount(&count) != cudaSuccess) cudaGetLastError();
      return count > 1;
    }();
    unsigned long long type = 0, managed = 0;
    int ordinal = -1;
    CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                         CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* data[3] = {&type, &managed, &ordinal};
    // Memory CUDA does not know is no error here: the slots keep their defaults.
    if (query(several_gpus ? 3 : 2, attributes, data, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS) {
      if (managed != 0) return {MemorySpace::managed, -1};
      if (type == CU_MEMORYTYPE_DEVICE) return {MemorySpace::device, ordinal};
      if (type == CU_MEMORYTYPE_HOST) return {MemorySpace::pinned, -1};
      return {};
    }
  }
  return locate_through_runtime(p);  // what the runtime says, at the runtime's cost
}

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t cls = size_class(bytes);
  if (cls < bytes) throw Error(Errc::out_of_memory, std::string("cuda: ") + what_ + " of " + std::to_string(bytes) + " bytes");
  // The host memory to remember a block by is taken before the block, so that a block is
  // never held without a record (it would be lost) nor recorded twice.
  const auto no_host_memory = [&] {
    return Error(Errc::out_of_memory, std::string("cuda: ") + what_ + " of " + std::to_string(bytes) +
                                          " bytes: no host memory to keep track of it");
  };
  auto it = cached_.find(cls);
  if (it != cached_.end()) {
    void* p = it->second;
    try {
      live_.emplace(p, cls);
    } catch (const std::bad_alloc&) {
      throw no_host_memory();  // the block stays cached
    }
    cached_.erase(it);
    return p;
  }
  void* p = nullptr;
  cudaError_t e = alloc_(&p, cls);
  if (e == cudaErrorMemoryAllocation && !cached_.empty()) {
    cudaGetLastError();
    release_cached();
    e = alloc_(&p, cls);
  }
  if (e != cudaSuccess) throw_error(e, std::string(what_) + " of " + std::to_string(bytes) + " bytes");
  try {
    live_.emplace(p, cls);
  } catch (const std::bad_alloc&) {
    if (free_(p) != cudaSuccess) cudaGetLastError();
    throw no_host_memory();
  }
  return p;
}

void CachingAllocator::deallocate(void* p) noexcept {
  if (!p) return;
  auto it = live_.find(p);
  if (it == live_.end()) return;  // not ours: nothing to give back
  // Caching the block takes host memory; without it the block goes back to CUDA (whose
  // free waits for the device, as a reuse in stream order would have).
  try {
    cached_.emplace(it->second, p);
  } catch (const std::bad_alloc&) {
    if (free_(p) != cudaSuccess) cudaGetLastError();  // nothing to report from here; the application's error stays its own
  }
  live_.erase(it);
}

void CachingAllocator::release_cached() noexcept {
  for (auto& [cls, p] : cached_) free_(p);
  cached_.clear();
}

CopyTeam::CopyTeam(int threads, bool streaming_stores)
    : shares_(threads < 1 ? 1 : threads), streaming_stores_(streaming_stores) {
  // A thread that cannot be started (the process's thread or memory limit): the workers
  // started so far are stopped and joined before the error leaves, since unwinding would
  // destroy the condition variable they wait on (that hung) and their joinable threads.
  try {
    workers_.reserve(static_cast<std::size_t>(shares_ - 1));
    for (int w = 1; w < shares_; ++w) workers_.emplace_back([this, w] { work(w); });
  } catch (const std::exception& e) {
    stop();
    throw Error(Errc::out_of_memory, "cuda: the host copy team could not start thread " +
                                         std::to_string(workers_.size() + 1) + " of " + std::to_string(shares_ - 1) +
                                         " (" + e.what() + "); ask for fewer threads (ContextOptions::threads)");
  }
}

CopyTeam::~CopyTeam() { stop(); }

void CopyTeam::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void CopyTeam::copy_share(int share) const {
  // This share's bytes of the concatenation of all segments.
  const std::size_t begin = job_bytes_ * share / shares_, end = job_bytes_ * (share + 1) / shares_;
  const bool streaming = streaming_stores_ && end - begin >= kStreamingMinBytes;
  std::size_t pos = 0;
  for (const Segment& s : *job_) {
    if (end <= pos) break;
    const std::size_t lo = begin > pos ? begin - pos : 0;
    const std::size_t hi = end - pos < s.bytes ? end - pos : s.bytes;
    if (lo < hi) {
      char* dst = static_cast<char*>(s.dst) + lo;
      const char* src = static_cast<const char*>(s.src) + lo;
      if (streaming)
        copy_streaming(dst, src, hi - lo);
      else
        std::memcpy(dst, src, hi - lo);
    }
    pos += s.bytes;
  }
  if (streaming) fence_streaming_stores();
}

void CopyTeam::copy(const std::vector<Segment>& segments) {
  std::size_t total = 0;
  for (const Segment& s : segments) total += s.bytes;
  if (total == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &segments;
    job_bytes_ = total;
    pending_ = shares_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  copy_share(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void CopyTeam::work(int share) {
  unsigned long seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    copy_share(share);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --pending_;
    }
    done_.notify_one();
  }
}

}  // namespace ew::detail::cuda
