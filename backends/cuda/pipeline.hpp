#pragma once
// Ops with host-resident operands (pageable or pinned host memory): the arrays go
// through the GPU in chunks over several streams (slots), so that host-to-device copies, kernels
// and device-to-host copies of different chunks overlap. Pinned operands are copied
// directly; pageable ones are staged through pinned buffers that a team of host threads
// fills and drains while the copy engines work on other chunks. Device scratch and
// pinned staging are allocated on first use and kept, within ContextOptions::staging_bytes.
#include <cstddef>
#include <memory>

#include <cuda_runtime.h>

#include "ew_internal/backend_impl.hpp"
#include "kernels.hpp"
#include "memory.hpp"

namespace ew::detail::cuda {

// 96 MiB: 2 slots x 3 arrays of 16 MiB chunks; 16 MiB was the fastest of 8, 16 and
// 28 MiB for pinned 512 MiB arrays on an H200 (2026-11-22): large enough that
// per-chunk costs vanish, small enough that the unoverlapped first chunk costs little.
inline constexpr std::size_t kDefaultStagingBytes = std::size_t(96) << 20;
inline constexpr std::size_t kMinStagingBytes = std::size_t(4) << 10;
// Far above any machine's pinned memory, and low enough that sizes derived from it
// (regions rounded up, chunks times elements) cannot wrap.
inline constexpr std::size_t kMaxStagingBytes = std::size_t(1) << 40;

// Two streams (slots): a third let more host-to-device copies run at once and cost 2 %
// on pinned and 13 % on pageable 512 MiB arrays (H200, 2026-11-22).
inline constexpr int kPipelineSlots = 2;
inline constexpr int kPipelineArrays = 3;  // a, b, out

// Bytes of one array's chunk: the staging holds kPipelineSlots slots of kPipelineArrays
// such regions, each a multiple of 256 bytes.
constexpr std::size_t pipeline_chunk_bytes(std::size_t staging_bytes) {
  return staging_bytes / (kPipelineSlots * kPipelineArrays) / 256 * 256;
}

// The chunk rule, in elements, with `left` elements left (left > 0): whole chunks while
// two or more chunks' worth is left, then halves down to a 16th of a chunk, so the last
// kernel and device-to-host copy start soon after the last input lands. The benchmark's
// alternative host paths (bench/cuda) cut their arrays by the same rule.
constexpr std::size_t next_chunk_elements(std::size_t left, std::size_t chunk) {
  const std::size_t smallest = chunk / 16 > 1 ? chunk / 16 : 1;
  if (left >= 2 * chunk) return chunk;
  const std::size_t half = left / 2 > smallest ? left / 2 : smallest;
  return left < half ? left : half;
}

class HostPipeline {
 public:
  HostPipeline(std::size_t staging_bytes, int copy_threads);
  ~HostPipeline();
  HostPipeline(const HostPipeline&) = delete;
  HostPipeline& operator=(const HostPipeline&) = delete;

  // Ordered after earlier work on `main`; later work on `main` waits for it. Returns
  // once every pageable output is written; pinned outputs are ready after a
  // synchronize of `main`, as for any asynchronous op. When a CUDA call fails it waits
  // for what it had enqueued, then throws: no input was written, each output element
  // holds its old value or its result, and the next call starts afresh (docs/gpu.md).
  void run(const OpCall& call, cudaStream_t main, LaunchShape& shape);

 private:
  static constexpr int kSlots = kPipelineSlots;
  static constexpr int kArrays = kPipelineArrays;
  struct Slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    char* scratch = nullptr;  // device: kArrays regions of chunk_bytes_
    char* staging = nullptr;  // pinned host: kArrays regions of chunk_bytes_
    bool pending_drain = false;
    bool in_use = false;
    std::size_t drain_offset = 0, drain_count = 0;
  };
  void run_chunks(const OpCall& call, cudaStream_t main, LaunchShape& shape);
  void abandon() noexcept;
  void release() noexcept;  // everything made, given back (the destructor's work)
  void ensure_scratch();
  void ensure_staging();
  CopyTeam& team();

  std::size_t chunk_bytes_;
  int copy_threads_;
  Slot slots_[kSlots];
  cudaEvent_t ready_ = nullptr;
  std::unique_ptr<CopyTeam> team_;
};

}  // namespace ew::detail::cuda
