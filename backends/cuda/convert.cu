// ew::convert on the device: every pair of f32, f64, f16 and bf16, with the bits of the
// CPU backends (ew/float16.hpp, convert_eval.hpp) for every input.
// - A NaN is rebuilt from its bits: the sign, the quiet bit and the top of the payload
//   (or the payload shifted up, when widening). The hardware converts give one canonical
//   NaN instead, so they never see one.
// - Every other value goes through the hardware's converts, which are exact when
//   widening and round once to nearest even when narrowing (cvt.rn, subnormals kept),
//   except f64 -> f16/bf16: narrow_bits (float16.hpp) rounds the double's bits once, as
//   the CPU backends do (through float would round twice).
// Each thread converts groups of 8 elements (16-byte vectors of whichever operand is
// 16-bit; 2 or 4 of a wider one), two groups in flight; the output's 16-byte boundary
// decides the groups, as in kernels.cuh. Exact aliasing (f16 <-> bf16 in place) is safe:
// a thread reads a group before it writes it, and no other thread touches that group.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ew_internal/convert_eval.hpp"
#include "kernels.cuh"
#include "kernels.hpp"

namespace ew::detail::cuda {

namespace {

template <class T> struct Format;
template <> struct Format<half> { using U = std::uint16_t; static constexpr int mant = 10; };
template <> struct Format<bfloat16> { using U = std::uint16_t; static constexpr int mant = 7; };
template <> struct Format<float> { using U = std::uint32_t; static constexpr int mant = 23; };
template <> struct Format<double> { using U = std::uint64_t; static constexpr int mant = 52; };

template <class T>
struct Bits {
  using U = typename Format<T>::U;
  static constexpr int width = int(sizeof(U)) * 8;
  static constexpr U one = 1;
  static constexpr U sign = one << (width - 1);
  static constexpr U fraction = (one << Format<T>::mant) - 1;
  static constexpr U inf = (sign - 1) & ~fraction;
  static constexpr U quiet = one << (Format<T>::mant - 1);
};

template <class T>
__device__ __forceinline__ typename Format<T>::U bits_of(T x) {
  typename Format<T>::U b;
  std::memcpy(&b, &x, sizeof(T));
  return b;
}
template <class T>
__device__ __forceinline__ T from_bits(typename Format<T>::U b) {
  T x;
  std::memcpy(&x, &b, sizeof(T));
  return x;
}

// A NaN converted: sign, quiet bit, the payload's top bits (narrowing) or the payload
// moved up (widening); what the CPU's converts and float16.hpp do.
template <class From, class To>
__device__ __forceinline__ typename Format<To>::U convert_nan(typename Format<From>::U b) {
  using F = Bits<From>;
  using G = Bits<To>;
  using U = typename Format<To>::U;
  const U sign = (b & F::sign) ? G::sign : U(0);
  const typename Format<From>::U fraction = b & F::fraction;
  U payload;
  if constexpr (Format<To>::mant >= Format<From>::mant)
    payload = static_cast<U>(static_cast<U>(fraction) << (Format<To>::mant - Format<From>::mant));
  else
    payload = static_cast<U>(fraction >> (Format<From>::mant - Format<To>::mant));
  return static_cast<U>(sign | G::inf | G::quiet | payload);
}

template <class T>
__device__ __forceinline__ float to_float(T x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else if constexpr (std::is_same_v<T, double>) return static_cast<float>(x);  // cvt.rn.f32.f64
  else return Storage16<T>::widen(x.bits);
}

// A value that is not NaN.
template <class From, class To>
__device__ __forceinline__ To convert_number(From x) {
  if constexpr (std::is_same_v<To, float>) {
    return to_float(x);
  } else if constexpr (std::is_same_v<To, double>) {
    if constexpr (std::is_same_v<From, float>) return static_cast<double>(x);
    else return static_cast<double>(to_float(x));  // exact twice
  } else if constexpr (std::is_same_v<From, double>) {
    return To(x);  // narrow_bits from the double's bits: one rounding
  } else {
    return To::from_bits(Storage16<To>::narrow(to_float(x)));  // from f32, or the other 16-bit type (exact)
  }
}

template <class From, class To>
__device__ __forceinline__ To convert_one(From x) {
  // Both computed, one selected: no branch per element (the hardware convert of a NaN is harmless).
  const typename Format<From>::U b = bits_of(x);
  const To number = convert_number<From, To>(x);
  const To nan = from_bits<To>(convert_nan<From, To>(b));
  return (b & ~Bits<From>::sign) > Bits<From>::inf ? nan : number;
}

constexpr int kGroup = 8;  // elements per group: 16 bytes of the narrowest dtype

template <class From, class To>
struct ConvertArgs {
  const From* in;
  To* out;
  std::uint64_t head;    // elements before the output's first 16-byte boundary
  std::uint64_t groups;  // whole groups after the head
  std::uint64_t tail;    // elements after the last group
};

template <class T, bool Vector>
__device__ __forceinline__ void load_group(const T* p, T (&v)[kGroup]) {
  if constexpr (Vector) {
#pragma unroll
    for (int k = 0; k < int(sizeof(T)) * kGroup / 16; ++k) {
      const uint4 x = __ldcs(reinterpret_cast<const uint4*>(p) + k);
      std::memcpy(&v[k * 16 / sizeof(T)], &x, 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kGroup; ++k) v[k] = p[k];
  }
}

template <class T>
__device__ __forceinline__ void store_group(T* p, const T (&v)[kGroup]) {
#pragma unroll
  for (int k = 0; k < int(sizeof(T)) * kGroup / 16; ++k) {
    uint4 x;
    std::memcpy(&x, &v[k * 16 / sizeof(T)], 16);
    __stcs(reinterpret_cast<uint4*>(p) + k, x);
  }
}

template <class From, class To, bool InVector>
__global__ void __launch_bounds__(kThreads) convert_kernel(const ConvertArgs<From, To> p) {
  constexpr int kUnroll = 2;
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  wait_for_previous_grid();
  if (thread < p.head) p.out[thread] = convert_one<From, To>(p.in[thread]);
  if (thread < p.tail) {
    const std::uint64_t i = p.head + p.groups * kGroup + thread;
    p.out[i] = convert_one<From, To>(p.in[i]);
  }
  const From* in = p.in + p.head;
  To* out = p.out + p.head;
  for (std::uint64_t first = thread; first < p.groups; first += threads * kUnroll) {
    From x[kUnroll][kGroup];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t g = first + u * threads;
      if (g < p.groups) load_group<From, InVector>(in + g * kGroup, x[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t g = first + u * threads;
      if (g < p.groups) {
        To y[kGroup];
#pragma unroll
        for (int k = 0; k < kGroup; ++k) y[k] = convert_one<From, To>(x[u][k]);
        store_group(out + g * kGroup, y);
      }
    }
  }
}

template <class From, class To>
cudaError_t launch_pair(std::size_t n, const From* in, To* out, const LaunchShape& shape, cudaStream_t stream) {
  ConvertArgs<From, To> p{};
  p.in = in, p.out = out;
  const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(out) % 16 / sizeof(To);
  p.head = misalign ? 16 / sizeof(To) - misalign : 0;
  if (p.head > n) p.head = n;
  p.groups = (n - p.head) / kGroup;
  p.tail = n - p.head - p.groups * kGroup;
  const bool in_vector = reinterpret_cast<std::uintptr_t>(in + p.head) % 16 == 0;
  // Every resident thread (at most 2048 per SM) busy, the rest looping.
  const unsigned blocks = grid_blocks(p.groups, std::uint64_t(2048 / kThreads) * std::uint64_t(shape.sm_count));
  const bool dependent_launch = sm90_features(shape.major);
  return in_vector ? launch_kernel(convert_kernel<From, To, true>, blocks, 0, stream, dependent_launch, p)
                   : launch_kernel(convert_kernel<From, To, false>, blocks, 0, stream, dependent_launch, p);
}

}  // namespace

cudaError_t launch_convert(DType from, DType to, std::size_t n, const void* in, void* out, const LaunchShape& shape,
                           cudaStream_t stream) {
  return dispatch_dtype(from, [&](auto from_tag) {
    using From = decltype(from_tag);
    return dispatch_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, To>) {
        return cudaErrorInvalidValue;  // the backend copies bytes for these
      } else {
        return launch_pair<From, To>(n, static_cast<const From*>(in), static_cast<To*>(out), shape, stream);
      }
    });
  });
}

}  // namespace ew::detail::cuda
