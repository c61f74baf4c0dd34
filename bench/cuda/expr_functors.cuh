#pragma once
// The expressions of the benchmarks as functors compiled ahead of time by nvcc: what a user
// hands to cub::DeviceTransform for the hand-written fused kernel. Each calls the arithmetic
// kit every backend uses (ew/detail/math.hpp: round-to-nearest intrinsics, no contraction),
// so the results have the same bits as the library's, which the benchmarks check.
// Used by ew-cuda-expr-bench and by ew-roofline's expressions section (expr_peers.cu).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ew/detail/math.hpp"
#include "ew/detail/scalar_kit.hpp"

namespace ew::bench::functors {

template <class T>
using Kit = ew::math::ScalarKit<T>;

// c = a + b
template <class T>
struct Add {
  __device__ T operator()(T a, T b) const { return Kit<T>::add(a, b); }
};

// y = max(x, 0)
template <class T>
struct Relu {
  __device__ T operator()(T x) const { return ew::math::max<Kit<T>>(x, T(0)); }
};

// y = x * sigmoid(x)
template <class T>
struct Silu {
  __device__ T operator()(T x) const { return Kit<T>::mul(x, ew::math::sigmoid<Kit<T>>(x)); }
};

// y = a*b + c*d
template <class T>
struct Dot4 {
  __device__ T operator()(T a, T b, T c, T d) const { return Kit<T>::add(Kit<T>::mul(a, b), Kit<T>::mul(c, d)); }
};

// y = min(max(s*a + b, lo), hi)
template <class T>
struct Clamp {
  T s, lo, hi;
  __device__ T operator()(T a, T b) const {
    using K = Kit<T>;
    return ew::math::min<K>(ew::math::max<K>(K::add(K::mul(s, a), b), lo), hi);
  }
};

// y = s*(a + b) + c: the 3-step chain t = a + b; t = s*t; y = t + c in one pass
template <class T>
struct Chain3 {
  T s;
  __device__ T operator()(T a, T b, T c) const {
    using K = Kit<T>;
    return K::add(K::mul(s, K::add(a, b)), c);
  }
};

// A float functor on 16-bit arrays (__half, __nv_bfloat16) as a cub user writes it: each
// input widened by CUDA's conversion (exact), the formula in float, the result rounded
// once to nearest even: the library's rule for 16-bit data (docs/ops.md).
template <class H>
struct Storage16;
template <>
struct Storage16<__half> {
  static __device__ float widen(__half x) { return __half2float(x); }
  static __device__ __half narrow(float x) { return __float2half_rn(x); }
};
template <>
struct Storage16<__nv_bfloat16> {
  static __device__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __nv_bfloat16 narrow(float x) { return __float2bfloat16_rn(x); }
};

template <class H, class F>
struct Stored16 {
  F f;  // the formula on floats
  template <class... X>
  __device__ H operator()(X... x) const {
    return Storage16<H>::narrow(f(Storage16<H>::widen(x)...));
  }
};

}  // namespace ew::bench::functors
