#pragma once
// The device code of the cuda backend: one kernel template serves every op and dtype.
// Each thread moves 16-byte vectors (float4, double2) and keeps up to `Unroll`
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

#include "ew/ops.hpp"

namespace ew::detail::cuda {

inline constexpr int kThreads = 256;

template <class T> struct VectorOf;
template <> struct VectorOf<float> { using type = float4; };
template <> struct VectorOf<double> { using type = double2; };

template <class T>
struct Pack {
  static constexpr int width = 16 / sizeof(T);
  T e[width];
};

// Cache policy of the vector loads and stores: plain, or evict-first streaming.
enum class Hint { plain, streaming };

template <class T, Hint hint>
__device__ __forceinline__ Pack<T> load_vector(const T* p) {
  using V = typename VectorOf<T>::type;
  V v = hint == Hint::streaming ? __ldcs(reinterpret_cast<const V*>(p)) : *reinterpret_cast<const V*>(p);
  Pack<T> r;
  if constexpr (Pack<T>::width == 4) {
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
  if constexpr (Pack<T>::width == 4) {
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
#pragma unroll
  for (int k = 0; k < Pack<T>::width; ++k) r.e[k] = p[k];
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
  T s, t;
};

// The op table read on the host side of compilation (its functions are not __device__);
// the kernel sees only the resulting constant.
template <Op op>
struct ReadsB {
  static constexpr bool value = info(op).reads_b();
};

template <Op op, class T, int Unroll, bool Aligned, Hint hint>
__global__ void __launch_bounds__(kThreads) stream_kernel(const StreamArgs<T> p) {
  constexpr bool reads_b = ReadsB<op>::value;
  constexpr int W = Pack<T>::width;
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;

  // Head and tail: at most W-1 elements each, done by the first threads of the grid.
  if (thread < p.head) {
    const std::uint64_t i = thread;
    p.out[i] = apply<op>(p.a[i], reads_b ? p.b[i] : T(0), p.s, p.t);
  }
  if (thread < p.tail) {
    const std::uint64_t i = p.head + p.vectors * W + thread;
    p.out[i] = apply<op>(p.a[i], reads_b ? p.b[i] : T(0), p.s, p.t);
  }

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
        Pack<T> r;
#pragma unroll
        for (int k = 0; k < W; ++k) r.e[k] = apply<op>(x[u].e[k], reads_b ? y[u].e[k] : T(0), p.s, p.t);
        store_vector<T, hint>(out + v * W, r);
      }
    }
  }
}

// Splits [0, n) of `out` into head, vectors and tail, and says which inputs can be
// read as vectors over the output's vector grid.
template <class T>
StreamArgs<T> make_stream_args(std::size_t n, const T* a, const T* b, T* out, T s, T t) {
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
