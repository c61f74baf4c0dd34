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

// 144 MiB: 3 slots x 3 arrays of 16 MiB chunks, the fastest of 8, 16 and 28 MiB for
// pinned 512 MiB arrays on an H200 (2026-11-22): large enough that per-chunk costs
// vanish, small enough that the unoverlapped first and last chunk cost little.
inline constexpr std::size_t kDefaultStagingBytes = std::size_t(144) << 20;
inline constexpr std::size_t kMinStagingBytes = std::size_t(4) << 10;

// How a call is cut into chunks: over how many streams (slots), and whether the last
// chunk is cut into pieces of halving size so that the transfers that follow the
// last host-to-device copy are short.
struct PipelineShape {
  int slots = 3;
  bool shrinking_tail = false;
};

class HostPipeline {
 public:
  static constexpr int kMaxSlots = 3;
  HostPipeline(std::size_t staging_bytes, int copy_threads, PipelineShape shape = {});
  ~HostPipeline();
  HostPipeline(const HostPipeline&) = delete;
  HostPipeline& operator=(const HostPipeline&) = delete;

  // Ordered after earlier work on `main`; later work on `main` waits for it. Returns
  // once every pageable output is written; pinned outputs are ready after a
  // synchronize of `main`, as for any asynchronous op.
  void run(const OpCall& call, cudaStream_t main, LaunchShape& shape);

 private:
  static constexpr int kArrays = 3;  // a, b, out
  struct Slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    char* scratch = nullptr;  // device: kArrays regions of chunk_bytes_
    char* staging = nullptr;  // pinned host: kArrays regions of chunk_bytes_
    bool pending_drain = false;
    bool in_use = false;
    std::size_t drain_offset = 0, drain_count = 0;
  };
  struct SlotRange {
    Slot *first, *last;
    Slot* begin() const { return first; }
    Slot* end() const { return last; }
  };
  SlotRange used_slots() { return {slots_, slots_ + shape_.slots}; }
  void ensure_scratch();
  void ensure_staging();
  CopyTeam& team();

  std::size_t chunk_bytes_;
  int copy_threads_;
  PipelineShape shape_;
  Slot slots_[kMaxSlots];
  cudaEvent_t ready_ = nullptr;
  std::unique_ptr<CopyTeam> team_;
};

}  // namespace ew::detail::cuda
