#pragma once
// A kernel the benchmark compares with the product's and that the product does not use
// (docs/performance/cuda.md, item 10, says why): built from the pieces of
// backends/cuda/kernels.cuh, whose bulk_kernel takes the store policy.
#include <type_traits>

#include "kernels.cuh"

namespace ew::detail::cuda {

namespace bulk {
// The shared memory of every committed bulk store has been read (it may be refilled).
__device__ __forceinline__ void wait_stores_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
}  // namespace bulk

// The bulk-copy kernel as a persistent grid: each block walks the tiles a grid apart
// through a ring of `Stages` shared-memory tiles, so the copy engine brings the next
// tiles while the block computes this one, and no block is launched per tile. It was
// 5-6 % slower than one tile per block at 2^24-2^28 on an H100 (2026-11-22).
// A tile is written only after it was read and tiles are disjoint, so exact aliasing
// stays safe.
template <Op op, class T, int Stages, class Store>
__global__ void __launch_bounds__(kThreads) bulk_ring_kernel(const StreamArgs<T> p, const int tile) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool reads_b = ReadsB<op>::value;
  constexpr int W = Pack<T>::width;
  extern __shared__ __align__(128) unsigned char shared[];
  __shared__ __align__(8) unsigned long long barriers[Stages];
  wait_for_previous_grid();
  head_and_tail<op>(p, std::uint64_t(blockIdx.x) * kThreads + threadIdx.x);

  const std::uint64_t tiles = (p.vectors + tile - 1) / tile;
  const std::size_t stage_bytes = bulk_shared_bytes<op>(tile);
  auto count_of = [&](std::uint64_t t) {
    const std::uint64_t left = p.vectors - t * tile;
    return left < std::uint64_t(tile) ? int(left) : tile;
  };
  auto fetch = [&](std::uint64_t t, int stage) {  // thread 0 only
    const unsigned bytes = unsigned(count_of(t)) * 16;
    const unsigned bar = bulk::shared_address(&barriers[stage]);
    const unsigned dst = bulk::shared_address(shared + stage * stage_bytes);
    bulk::expect_bytes(bar, reads_b ? 2 * bytes : bytes);
    bulk::load(dst, p.a + p.head + t * tile * W, bytes, bar);
    if constexpr (reads_b) bulk::load(dst + unsigned(tile) * 16, p.b + p.head + t * tile * W, bytes, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) bulk::init_barrier(bulk::shared_address(&barriers[s]));
    bulk::fence_to_copy_engine();
    for (int s = 0; s < Stages; ++s)
      if (blockIdx.x + std::uint64_t(s) * gridDim.x < tiles) fetch(blockIdx.x + std::uint64_t(s) * gridDim.x, s);
  }
  __syncthreads();  // the barriers are initialized before anyone waits on them
  unsigned k = 0;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
    const int stage = int(k % Stages);
    bulk::wait(bulk::shared_address(&barriers[stage]), (k / Stages) & 1);
    unsigned char* at = shared + stage * stage_bytes;
    Store::template store<op, T>(p, reinterpret_cast<T*>(at), reinterpret_cast<const T*>(at + std::size_t(tile) * 16),
                                 t * tile, count_of(t));
    __syncthreads();  // the whole block is done with this stage's tiles
    const std::uint64_t next = t + std::uint64_t(Stages) * gridDim.x;
    if (threadIdx.x == 0 && next < tiles) {
      if constexpr (std::is_same_v<Store, BulkStore>) bulk::wait_stores_read();
      fetch(next, stage);
    }
  }
  if (threadIdx.x == 0) Store::finish();
#endif
}

}  // namespace ew::detail::cuda
