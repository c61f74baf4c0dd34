#pragma once
// The device code of the cuda backend: one kernel template serves every op and dtype.
// Each thread moves 16-byte vectors (float4, double2, or 8 f16/bf16 elements as 4 words
// that storage16.cuh widens to float in pairs) and keeps up to `Unroll`
// independent vector loads per input in flight before the first use. A thread's
// vectors are a whole grid apart, so a small array spreads over as many threads as it
// has vectors and a large one gives every resident thread `Unroll` loads at once.
//
// The output decides the vector grid: elements before its first 16-byte boundary
// (the head) and after its last whole vector (the tail) are done one at a time. An
// input at another offset mod 16 bytes is read element by element over the same grid
// (the `Aligned == false` variant), so every element-aligned pointer works.
// Each thread reads its elements before it writes them, so exact aliasing of the
// output and an input is safe; loads are coherent (no __restrict__, no ld.global.nc).
// This header is included by kernels.cu and by the benchmark (bench/cuda), which
// instantiates other policies of the same code to compare them.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ew/ops.hpp"
#include "storage16.cuh"

namespace ew::detail::cuda {

inline constexpr int kThreads = 256;

template <class T> struct VectorOf;
template <> struct VectorOf<float> { using type = float4; };
template <> struct VectorOf<double> { using type = double2; };
template <> struct VectorOf<half> { using type = uint4; };
template <> struct VectorOf<bfloat16> { using type = uint4; };

template <class T, class = void>
struct Pack {
  static constexpr int width = 16 / sizeof(T);
  T e[width];
};
// 16-bit data: 8 elements as 4 words of two.
template <class T>
struct Pack<T, std::enable_if_t<is_storage16_v<T>>> {
  static constexpr int width = 8;
  std::uint32_t w[4];
};

// Cache policy of the vector loads and stores: plain, or evict-first streaming.
enum class Hint { plain, streaming };

template <class T, Hint hint>
__device__ __forceinline__ Pack<T> load_vector(const T* p) {
  using V = typename VectorOf<T>::type;
  V v = hint == Hint::streaming ? __ldcs(reinterpret_cast<const V*>(p)) : *reinterpret_cast<const V*>(p);
  Pack<T> r;
  if constexpr (is_storage16_v<T>) {
    r.w[0] = v.x, r.w[1] = v.y, r.w[2] = v.z, r.w[3] = v.w;
  } else if constexpr (Pack<T>::width == 4) {
    r.e[0] = v.x, r.e[1] = v.y, r.e[2] = v.z, r.e[3] = v.w;
  } else {
    r.e[0] = v.x, r.e[1] = v.y;
  }
  return r;
}

template <class T, Hint hint>
__device__ __forceinline__ void store_vector(T* p, const Pack<T>& r) {
  using V = typename VectorOf<T>::type;
  V v;
  if constexpr (is_storage16_v<T>) {
    v = make_uint4(r.w[0], r.w[1], r.w[2], r.w[3]);
  } else if constexpr (Pack<T>::width == 4) {
    v = make_float4(r.e[0], r.e[1], r.e[2], r.e[3]);
  } else {
    v = make_double2(r.e[0], r.e[1]);
  }
  // Through the intrinsics: a plain struct assignment was split into 4-byte stores.
  if constexpr (hint == Hint::streaming)
    __stcs(reinterpret_cast<V*>(p), v);
  else
    __stwb(reinterpret_cast<V*>(p), v);
}

template <class T>
__device__ __forceinline__ Pack<T> load_elements(const T* p) {
  Pack<T> r;
  if constexpr (is_storage16_v<T>) {
#pragma unroll
    for (int k = 0; k < 4; ++k) r.w[k] = std::uint32_t(p[2 * k].bits) | std::uint32_t(p[2 * k + 1].bits) << 16;
  } else {
#pragma unroll
    for (int k = 0; k < Pack<T>::width; ++k) r.e[k] = p[k];
  }
  return r;
}

template <class T>
struct StreamArgs {
  const T* a;
  const T* b;      // null when the op reads one stream (for in-place ops: the output)
  T* out;
  std::uint64_t head;  // elements before the output's first 16-byte boundary
  std::uint64_t vectors;  // whole vectors after the head
  std::uint64_t tail;  // elements after the last whole vector
  bool a_vector;   // a + head is 16-byte aligned (only read by the unaligned variant)
  bool b_vector;
  compute_t<T> s, t;  // float for the 16-bit types
};

// The op table read on the host side of compilation (its functions are not __device__);
// the kernel sees only the resulting constant.
template <Op op>
struct ReadsB {
  static constexpr bool value = info(op).reads_b();
};

// Programmatic dependent launch (sm_90+): a kernel launched with it may start while the
// kernel before it on the stream drains; `wait` blocks until that kernel has finished
// and its writes are visible, so no global memory is touched before it. Letting the
// next kernel launch right away hides the launch gap between back-to-back ops.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// One element, as the vector path computes it.
template <Op op, class T>
__device__ __forceinline__ T apply_element(T a, T b, compute_t<T> s, compute_t<T> t) {
  if constexpr (is_storage16_v<T>) return apply_one<op>(a, b, s, t);
  else return apply<op>(a, b, s, t);
}

// One 16-byte vector.
template <Op op, class T>
__device__ __forceinline__ Pack<T> apply_vector(const Pack<T>& x, const Pack<T>& y, compute_t<T> s, compute_t<T> t) {
  constexpr bool reads_b = ReadsB<op>::value;
  Pack<T> r;
  if constexpr (is_storage16_v<T>) {
#pragma unroll
    for (int k = 0; k < 4; ++k) r.w[k] = apply_pair<op, T>(x.w[k], reads_b ? y.w[k] : 0u, s, t);
  } else {
#pragma unroll
    for (int k = 0; k < Pack<T>::width; ++k) r.e[k] = apply<op>(x.e[k], reads_b ? y.e[k] : T(0), s, t);
  }
  return r;
}

template <Op op, class T>
__device__ __forceinline__ void head_and_tail(const StreamArgs<T>& p, std::uint64_t thread) {
  constexpr bool reads_b = ReadsB<op>::value;
  if (thread < p.head) {
    const std::uint64_t i = thread;
    p.out[i] = apply_element<op>(p.a[i], reads_b ? p.b[i] : p.a[i], p.s, p.t);
  }
  if (thread < p.tail) {
    const std::uint64_t i = p.head + p.vectors * Pack<T>::width + thread;
    p.out[i] = apply_element<op>(p.a[i], reads_b ? p.b[i] : p.a[i], p.s, p.t);
  }
}

template <Op op, class T, int Unroll, bool Aligned, Hint hint>
__global__ void __launch_bounds__(kThreads) stream_kernel(const StreamArgs<T> p) {
  constexpr bool reads_b = ReadsB<op>::value;
  constexpr int W = Pack<T>::width;
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  wait_for_previous_grid();

  // Head and tail: at most W-1 elements each, done by the first threads of the grid.
  head_and_tail<op>(p, thread);

  const T* a = p.a + p.head;
  const T* b = reads_b ? p.b + p.head : nullptr;
  T* out = p.out + p.head;
  for (std::uint64_t first = thread; first < p.vectors; first += threads * Unroll) {
    Pack<T> x[Unroll], y[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::uint64_t v = first + u * threads;
      if (v < p.vectors) {
        if (Aligned || p.a_vector)
          x[u] = load_vector<T, hint>(a + v * W);
        else
          x[u] = load_elements(a + v * W);
        if constexpr (reads_b) {
          if (Aligned || p.b_vector)
            y[u] = load_vector<T, hint>(b + v * W);
          else
            y[u] = load_elements(b + v * W);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::uint64_t v = first + u * threads;
      if (v < p.vectors) {
        store_vector<T, hint>(out + v * W, apply_vector<op, T>(x[u], reads_b ? y[u] : x[u], p.s, p.t));
      }
    }
  }
}

// The copy engine's instructions (sm_90+) the product uses: bulk copies from global
// into shared memory, completing on an mbarrier.
namespace bulk {
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void init_barrier(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
// Orders this thread's ordinary shared-memory accesses (barrier init, computed
// results) before the copy engine's.
__device__ __forceinline__ void fence_to_copy_engine() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void expect_bytes(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{ .reg .pred ready; mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2; selp.u32 %0, 1, 0, ready; }"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
}  // namespace bulk

template <Op op>
__host__ __device__ constexpr int bulk_inputs() {
  return ReadsB<op>::value ? 2 : 1;
}
template <Op op>
__host__ __device__ constexpr std::size_t bulk_shared_bytes(int tile) {
  return bulk_inputs<op>() * std::size_t(tile) * 16;
}

// The block computes `count` vectors from tiles in shared memory into `out` (global or
// shared memory), one 4- or 8-byte unit per thread per step, so a warp writes 128 or 256
// contiguous bytes: an element of f32 or f64, a word of two f16/bf16 elements.
template <Op op, class T>
__device__ __forceinline__ void compute_tile(const StreamArgs<T>& p, const T* tile_a, const T* tile_b, T* out,
                                             int count) {
  constexpr bool reads_b = ReadsB<op>::value;
  if constexpr (is_storage16_v<T>) {
    const auto* a = reinterpret_cast<const std::uint32_t*>(tile_a);
    const auto* b = reinterpret_cast<const std::uint32_t*>(tile_b);
    auto* o = reinterpret_cast<std::uint32_t*>(out);
    const int words = count * 4;
    for (int i = threadIdx.x; i < words; i += kThreads) o[i] = apply_pair<op, T>(a[i], reads_b ? b[i] : 0u, p.s, p.t);
  } else {
    const int elements = count * Pack<T>::width;
    for (int i = threadIdx.x; i < elements; i += kThreads)
      out[i] = apply<op>(tile_a[i], reads_b ? tile_b[i] : T(0), p.s, p.t);
  }
}

// How a tile's results leave the block, a policy of bulk_kernel: `store` computes the
// tile of `count` vectors already in shared memory at `tile_a` (and `tile_b` for
// two-input ops) and writes it out, every thread of the block taking part; `finish`
// (thread 0, before the block exits) waits for whatever `store` left in flight.
// Element stores: one per thread per step, so a warp writes 128 contiguous bytes (the
// product's policy for f32 and f64; BulkStore below for 16-bit data).
struct ElementStore {
  template <Op op, class T>
  static __device__ __forceinline__ void store(const StreamArgs<T>& p, T* tile_a, const T* tile_b,
                                               std::uint64_t first, int count) {
    compute_tile<op, T>(p, tile_a, tile_b, p.out + p.head + first * Pack<T>::width, count);
  }
  static __device__ __forceinline__ void finish() {}
};

// The copy engine's bulk stores (sm_90+): shared to global memory, completing in bulk
// groups.
namespace bulk {
__device__ __forceinline__ void store(void* dst, unsigned src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Every committed store is done.
__device__ __forceinline__ void wait_stores() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
}  // namespace bulk

// A store policy of bulk_kernel: results are written into shared memory over the first
// input's tile and leave with one bulk store per tile. The product's policy for 16-bit
// data: on an H200 f16 add at 2^28 ran at 4302 GB/s with it against 4139 with element
// stores (bf16 4318 against 4284; equal on an H100; f32 and f64 0.4-0.8 % slower with it,
// bench/cuda/results/h200-2026-11-23-f16-bench.log, "Kernel policies").
struct BulkStore {
  template <Op op, class T>
  static __device__ __forceinline__ void store(const StreamArgs<T>& p, T* tile_a, const T* tile_b,
                                               std::uint64_t first, int count) {
    T* out = p.out + p.head + first * Pack<T>::width;
    compute_tile<op, T>(p, tile_a, tile_b, tile_a, count);
    bulk::fence_to_copy_engine();
    __syncthreads();
    if (threadIdx.x == 0) bulk::store(out, bulk::shared_address(tile_a), unsigned(count) * 16);
  }
  static __device__ __forceinline__ void finish() { bulk::wait_stores(); }
};

// The bulk-copy kernel (sm_90+, all operands 16-byte aligned past the head), in the
// shape of cub::DeviceTransform's sm_90 path, which it matched or beat in every cell
// measured (docs/performance/cuda.md): each block takes one tile of `tile` vectors;
// one thread asks the copy engine of the SM (cp.async.bulk) to bring the tile of each
// input into shared memory in one request, completing on an mbarrier; then the block
// computes and stores the tile. Tiles are sized for 48 KiB of input tiles in flight per
// SM (bulk_tile_for): bigger tiles (8 KiB per input, up to 128 KiB in flight) and
// evict-first or 16-byte stores were 0.5-3 % slower at 2^26-2^28 elements; bulk
// stores within 0.2 % of element stores for f32 and f64 on an H100 (BulkStore: faster
// for 16-bit data on an H200).
// Tiles are independent: no block waits on another, so exact aliasing stays safe.
template <Op op, class T, class Store = ElementStore>
__global__ void __launch_bounds__(kThreads) bulk_kernel(const StreamArgs<T> p, const int tile) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr bool reads_b = ReadsB<op>::value;
  constexpr int W = Pack<T>::width;
  extern __shared__ __align__(128) unsigned char shared[];
  __shared__ __align__(8) unsigned long long barrier;
  wait_for_previous_grid();
  head_and_tail<op>(p, std::uint64_t(blockIdx.x) * kThreads + threadIdx.x);

  const std::uint64_t first = std::uint64_t(blockIdx.x) * tile;
  if (first >= p.vectors) return;  // block 0 of an array with no whole vector
  const std::uint64_t left = p.vectors - first;
  const int count = left < std::uint64_t(tile) ? int(left) : tile;
  const unsigned bytes = unsigned(count) * 16;
  const unsigned bar = bulk::shared_address(&barrier);
  const unsigned sa = bulk::shared_address(shared);
  if (threadIdx.x == 0) {
    bulk::init_barrier(bar);
    bulk::fence_to_copy_engine();
    bulk::expect_bytes(bar, reads_b ? 2 * bytes : bytes);
    bulk::load(sa, p.a + p.head + first * W, bytes, bar);
    if constexpr (reads_b) bulk::load(sa + unsigned(tile) * 16, p.b + p.head + first * W, bytes, bar);
  }
  __syncthreads();  // the barrier is initialized before anyone waits on it
  bulk::wait(bar, 0);
  Store::template store<op, T>(p, reinterpret_cast<T*>(shared),
                               reinterpret_cast<const T*>(shared + std::size_t(tile) * 16), first, count);
  if (threadIdx.x == 0) Store::finish();
#elif defined(__CUDA_ARCH__)
  __trap();  // never launched on code below sm_90 (LaunchShape::major): a launch here is a bug, made loud
#endif
}

// Vectors per tile: the fewest elements per thread (1..32) for which the input tiles of
// every resident block reach `bytes_in_flight_per_sm`, cub::DeviceTransform's rule (its
// sm_90 target is 48 KiB; add f32: 3 elements per thread, 3 KiB per input).
inline constexpr std::size_t kBulkBytesInFlightPerSm = 48 << 10;
template <Op op, class T, class Store = ElementStore>
cudaError_t bulk_tile_for(std::size_t bytes_in_flight_per_sm, int& tile) {
  tile = kThreads / Pack<T>::width;
  for (int elements_per_thread = 1; elements_per_thread <= 32; ++elements_per_thread) {
    const int candidate = kThreads * elements_per_thread / Pack<T>::width;  // kThreads: a multiple of every width
    if (bulk_shared_bytes<op>(candidate) > 48 << 10) break;  // the default dynamic shared memory limit
    tile = candidate;
    int blocks = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bulk_kernel<op, T, Store>, kThreads,
                                                                         bulk_shared_bytes<op>(candidate));
    if (e != cudaSuccess) return e;
    if (std::size_t(blocks) * kThreads * elements_per_thread * bulk_inputs<op>() * sizeof(T) >= bytes_in_flight_per_sm)
      break;
  }
  return cudaSuccess;
}

inline unsigned bulk_blocks(std::uint64_t vectors, int tile) {
  const std::uint64_t blocks = (vectors + tile - 1) / tile;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// Launches with programmatic dependent launch where the GPU has it (sm_90+). The launch's own
// status, never cudaGetLastError(): that would take an error the application has yet to read
// for this launch's, and clear it.
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), unsigned blocks, std::size_t shared_bytes, cudaStream_t stream,
                          bool dependent_launch, Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = dependent_launch ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// Splits [0, n) of `out` into head, vectors and tail, and says which inputs can be
// read as vectors over the output's vector grid.
template <class T>
StreamArgs<T> make_stream_args(std::size_t n, const T* a, const T* b, T* out, compute_t<T> s, compute_t<T> t) {
  constexpr std::uintptr_t W = Pack<T>::width;
  const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(out) % 16 / sizeof(T);
  StreamArgs<T> p{};
  p.a = a, p.b = b, p.out = out, p.s = s, p.t = t;
  p.head = misalign ? W - misalign : 0;
  if (p.head > n) p.head = n;
  p.vectors = (n - p.head) / W;
  p.tail = n - p.head - p.vectors * W;
  p.a_vector = reinterpret_cast<std::uintptr_t>(a + p.head) % 16 == 0;
  p.b_vector = !b || reinterpret_cast<std::uintptr_t>(b + p.head) % 16 == 0;
  return p;
}

// Blocks for `vectors` vectors: one vector per thread until the grid covers every
// resident thread (`max_blocks`), beyond that each thread takes Unroll vectors and then loops.
inline unsigned grid_blocks(std::uint64_t vectors, std::uint64_t max_blocks) {
  std::uint64_t blocks = (vectors + kThreads - 1) / kThreads;
  if (blocks > max_blocks) blocks = max_blocks;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

}  // namespace ew::detail::cuda
