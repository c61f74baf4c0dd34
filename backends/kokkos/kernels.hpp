#pragma once
// The Kokkos kernels, written once for every execution space. Each element is
// computed by ew::apply<op>, so results are the scalar reference's bit for bit.
//
// Device spaces: Kokkos does not widen global loads by itself (a float lambda reached
// 2514 GB/s on an H200 where float4 reached 4332), so the body moves 16-byte vectors,
// `vectors_per_iteration` of them per input stream, all loads issued before any use.
// Consecutive iterations touch consecutive vectors, so every load is coalesced. The
// few elements before the first 16-byte boundary of the output (head) and after the
// last whole vector (tail) are done by the first iterations of the same launch: a
// second launch would cost more than they do.
//
// Host spaces: chunks of whole cache lines per iteration. Above a size where the
// output cannot stay in cache, x86 stores bypass the cache (no read-for-ownership of
// the output line): about 1.3x on a full memory bus.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#define EW_KOKKOS_STREAMING_STORES 1
#endif

// The library is built for baseline x86-64, where the fused ops' fma is a libm call per
// element. Host chunks are also compiled for CPUs with the FMA instruction (and AVX, which
// it implies) and that copy is chosen at run time: the same bits, fma is exactly rounded
// either way. Not where the file is compiled as CUDA (a device-enabled Kokkos).
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__) && !defined(__CUDACC__)
#define EW_KOKKOS_FMA_CLONE 1
#endif

#include "ew/ops.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/convert_eval.hpp"

namespace ew::detail::kokkos {

using Index = std::int64_t;

template <class T, class MemorySpace>
using UnmanagedView = Kokkos::View<T*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// One 16-byte load or store: 4 floats or 2 doubles.
template <class T>
struct alignas(16) Vec {
  static constexpr int lanes = 16 / sizeof(T);
  T v[lanes];
};

template <class T>
struct Scalars {
  T s, t;
};

// Scalar part of a call in which a, b and out share their offset from a 16-byte
// boundary (otherwise there are no vectors: `vectors` = 0 and `head` = n).
struct VectorSplit {
  Index head;     // elements before the output's first 16-byte boundary
  Index vectors;  // whole 16-byte vectors after the head
  Index tail;     // elements after the last whole vector
};

template <class T>
VectorSplit split_for_vectors(const OpCall& c) {
  const auto addr = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  const Index n = static_cast<Index>(c.n);
  const std::uintptr_t out_off = addr(c.out) % 16;
  const bool same_offset = addr(c.a) % 16 == out_off && (!c.b || addr(c.b) % 16 == out_off);
  if (!same_offset) return {n, 0, 0};
  const Index head = std::min<Index>(n, static_cast<Index>((16 - out_off) % 16 / sizeof(T)));
  const Index vectors = (n - head) / Vec<T>::lanes;
  return {head, vectors, n - head - vectors * Vec<T>::lanes};
}

template <Op op, bool reads_b, class T, class MemorySpace>
struct DeviceKernel {
  static constexpr Index vectors_per_iteration = 4;  // 64 bytes per stream in flight per thread
  static constexpr Index tile = 128;  // consecutive iterations per group of vectors
  using V = Vec<T>;

  UnmanagedView<const T, MemorySpace> a, b;  // whole arrays, for head and tail
  UnmanagedView<T, MemorySpace> out;
  UnmanagedView<const V, MemorySpace> av, bv;  // the vector body
  UnmanagedView<V, MemorySpace> outv;
  VectorSplit split;
  Scalars<compute_t<T>> k;

  static Index iterations(const VectorSplit& sp) {
    const Index per_tile = tile * vectors_per_iteration;
    const Index body = (sp.vectors + per_tile - 1) / per_tile * tile;
    return std::max({body, sp.head, sp.tail});
  }

  KOKKOS_INLINE_FUNCTION void element(Index i) const {
    out(i) = apply<op>(a(i), reads_b ? b(i) : T(0), k.s, k.t);
  }

  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    const Index first = i / tile * tile * vectors_per_iteration + i % tile;
    V x[vectors_per_iteration], y[vectors_per_iteration];
    for (Index j = 0; j < vectors_per_iteration; ++j) {
      const Index v = first + j * tile;
      if (v < split.vectors) {
        x[j] = av(v);
        if (reads_b) y[j] = bv(v);
      }
    }
    for (Index j = 0; j < vectors_per_iteration; ++j) {
      const Index v = first + j * tile;
      if (v < split.vectors) {
        V r;
        for (int l = 0; l < V::lanes; ++l) r.v[l] = apply<op>(x[j].v[l], reads_b ? y[j].v[l] : T(0), k.s, k.t);
        outv(v) = r;
      }
    }
    if (i < split.head) element(i);
    if (i < split.tail) element(split.head + split.vectors * V::lanes + i);
  }
};

template <Op op, bool reads_b, class T, class Exec>
void run_device(const Exec& exec, const OpCall& c) {
  using Space = typename Exec::memory_space;
  using Kernel = DeviceKernel<op, reads_b, T, Space>;
  using V = Vec<T>;
  const Index n = static_cast<Index>(c.n);
  Kernel kernel;
  kernel.split = split_for_vectors<T>(c);
  kernel.k = {static_cast<compute_t<T>>(c.s), static_cast<compute_t<T>>(c.t)};
  kernel.a = UnmanagedView<const T, Space>(c.a_as<T>(), n);
  kernel.out = UnmanagedView<T, Space>(c.out_as<T>(), n);
  if (reads_b) kernel.b = UnmanagedView<const T, Space>(c.b_as<T>(), n);
  const Index h = kernel.split.head, nv = kernel.split.vectors;
  kernel.av = UnmanagedView<const V, Space>(reinterpret_cast<const V*>(c.a_as<T>() + h), nv);
  kernel.outv = UnmanagedView<V, Space>(reinterpret_cast<V*>(c.out_as<T>() + h), nv);
  if (reads_b) kernel.bv = UnmanagedView<const V, Space>(reinterpret_cast<const V*>(c.b_as<T>() + h), nv);
  Kokkos::parallel_for("ew::kokkos::vectors",
                       Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(exec, 0, Kernel::iterations(kernel.split)),
                       kernel);
}

// Outputs of at least this many bytes are written with streaming stores on x86.
inline constexpr std::size_t streaming_bytes = std::size_t(1) << 20;

template <Op op, bool reads_b, bool streaming, class T, class MemorySpace>
struct HostKernel {
  static constexpr Index line = 64 / sizeof(T);      // elements per cache line
  static constexpr Index chunk = 64 * line;          // elements per iteration (4 KiB of output)

  UnmanagedView<const T, MemorySpace> a, b;
  UnmanagedView<T, MemorySpace> out;
  Index begin;  // first element on a cache-line boundary of the output
  Scalars<compute_t<T>> k;
  bool fma_instruction = false;  // run the chunks compiled for CPUs with FMA

  void elements(Index from, Index to) const {
    for (Index i = from; i < to; ++i) out(i) = apply<op>(a(i), reads_b ? b(i) : T(0), k.s, k.t);
  }

  void operator()(Index c) const {
#ifdef EW_KOKKOS_FMA_CLONE
    if (fma_instruction) return run_chunk_fma(c);
#endif
    run_chunk(c);
  }

#ifdef EW_KOKKOS_FMA_CLONE
  __attribute__((target("fma"))) void run_chunk_fma(Index c) const { run_chunk(c); }
#endif

  // Inlined into run_chunk_fma, where it is compiled with that function's instructions.
  __attribute__((always_inline)) void run_chunk(Index c) const {
    const Index from = begin + c * chunk, to = std::min<Index>(from + chunk, static_cast<Index>(out.extent(0)));
    if constexpr (!streaming) {
      for (Index i = from; i < to; ++i) out(i) = apply<op>(a(i), reads_b ? b(i) : T(0), k.s, k.t);
    } else {
#ifdef EW_KOKKOS_STREAMING_STORES
      Index i = from;
      for (; i + line <= to; i += line) {
        alignas(64) T r[line];
        for (Index l = 0; l < line; ++l) r[l] = apply<op>(a(i + l), reads_b ? b(i + l) : T(0), k.s, k.t);
        for (Index l = 0; l < line; l += 16 / sizeof(T))
          _mm_stream_si128(reinterpret_cast<__m128i*>(&out(i + l)), _mm_load_si128(reinterpret_cast<const __m128i*>(r + l)));
      }
      for (; i < to; ++i) out(i) = apply<op>(a(i), reads_b ? b(i) : T(0), k.s, k.t);
      _mm_sfence();  // streaming stores are weakly ordered: publish them before the iteration ends
#else
      elements(from, to);  // run_host never asks for streaming here; stay correct if it does
#endif
    }
  }
};

template <Op op, bool reads_b, bool streaming, class T, class Exec>
void run_host_kernel(const Exec& exec, const OpCall& c) {
  using Space = typename Exec::memory_space;
  using Kernel = HostKernel<op, reads_b, streaming, T, Space>;
  const Index n = static_cast<Index>(c.n);
  Kernel kernel;
  kernel.k = {static_cast<compute_t<T>>(c.s), static_cast<compute_t<T>>(c.t)};
  kernel.a = UnmanagedView<const T, Space>(c.a_as<T>(), n);
  kernel.out = UnmanagedView<T, Space>(c.out_as<T>(), n);
  if (reads_b) kernel.b = UnmanagedView<const T, Space>(c.b_as<T>(), n);
  const std::uintptr_t out_off = reinterpret_cast<std::uintptr_t>(c.out) % 64;
  kernel.begin = std::min<Index>(n, static_cast<Index>((64 - out_off) % 64 / sizeof(T)));
#ifdef EW_KOKKOS_FMA_CLONE
  static const bool cpu_has_fma = __builtin_cpu_supports("fma");
  kernel.fma_instruction = cpu_has_fma;
#endif
  kernel.elements(0, kernel.begin);
  const Index chunks = (n - kernel.begin + Kernel::chunk - 1) / Kernel::chunk;
  Kokkos::parallel_for("ew::kokkos::host", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(exec, 0, chunks),
                       kernel);
}

template <Op op, bool reads_b, class T, class Exec>
void run_host(const Exec& exec, const OpCall& c) {
#ifdef EW_KOKKOS_STREAMING_STORES
  // An output that is also an input (axpy, axpby, in-place calls) is read anyway: streaming
  // stores save no read-for-ownership there and evict the lines just loaded (measured
  // 0.6x: axpy f32 at 2^20, 13.7 against 22 GB/s).
  const bool output_is_read = c.out == c.a || c.out == c.b;
  if (!output_is_read && c.n * sizeof(T) >= streaming_bytes) return run_host_kernel<op, reads_b, true, T>(exec, c);
#endif
  run_host_kernel<op, reads_b, false, T>(exec, c);
}

template <class T, class Exec>
void run(const Exec& exec, const OpCall& c) {
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  dispatch_op(c.op, [&](auto o) {
    constexpr Op op = decltype(o)::value;
    constexpr bool reads_b = info(op).reads_b();
    if constexpr (on_host)
      run_host<op, reads_b, T>(exec, c);
    else
      run_device<op, reads_b, T>(exec, c);
  });
}

// ew::convert, one element per iteration through convert_element: the scalar bits.
template <class From, class To, class MemorySpace>
struct ConvertKernel {
  UnmanagedView<const From, MemorySpace> in;
  UnmanagedView<To, MemorySpace> out;
  KOKKOS_INLINE_FUNCTION void operator()(Index i) const { out(i) = convert_element<From, To>(in(i)); }
};

template <class Exec>
void convert(const Exec& exec, const ConvertCall& c) {
  using Space = typename Exec::memory_space;
  const Index n = static_cast<Index>(c.n);
  dispatch_dtype(c.from, [&](auto from) {
    using From = decltype(from);
    dispatch_dtype(c.to, [&](auto to) {
      using To = decltype(to);
      ConvertKernel<From, To, Space> kernel{UnmanagedView<const From, Space>(static_cast<const From*>(c.in), n),
                                            UnmanagedView<To, Space>(static_cast<To*>(c.out), n)};
      Kokkos::parallel_for("ew::kokkos::convert", Kokkos::RangePolicy<Exec, Kokkos::IndexType<Index>>(exec, 0, n),
                           kernel);
    });
  });
}

}  // namespace ew::detail::kokkos
