#pragma once
// f16 and bf16 on the device: the conversions the kernels use, giving the bits of
// ew/float16.hpp's (the CPU backends') for every input, with the hardware's converts.
// - Widening: f16 through cvt.f32.f16 (exact), bf16 by a shift (exact). Neither quiets a
//   NaN: op kernels feed the value to float arithmetic, which returns the GPU's one
//   canonical NaN (0x7fffffff) for any NaN operand, so the input's payload and quiet bit
//   never reach the result. Conversions (convert.cu) build NaN results from the bits.
// - Narrowing: cvt.rn.{f16,bf16}{,x2}.f32, round to nearest even, overflow to ±inf,
//   subnormal results rounded like any other. They give 0x7fff for any NaN; so does
//   narrow_bits for the canonical NaN that float arithmetic returns, so op results agree
//   bit for bit. copy does no arithmetic: it quiets NaNs in integer code (below), which is
//   what widening then narrowing does to them.
// Two elements share a 32-bit word (element 0 in the low half): the kernels move
// 16-byte vectors of 4 words and convert a word's pair with one instruction.
#include <cuda_runtime.h>

#include <cstdint>

#include "ew/float16.hpp"
#include "ew/ops.hpp"

namespace ew::detail::cuda {

template <class T> struct Storage16;

template <>
struct Storage16<half> {
  static __device__ __forceinline__ float widen(std::uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
  }
  static __device__ __forceinline__ float widen_lo(std::uint32_t w) {
    float f;
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(w));
    return f;
  }
  static __device__ __forceinline__ float widen_hi(std::uint32_t w) {
    float f;
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=f"(f) : "r"(w));
    return f;
  }
  static __device__ __forceinline__ std::uint16_t narrow(float x) {
    std::uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
  }
  static __device__ __forceinline__ std::uint32_t narrow_pair(float lo, float hi) {
    std::uint32_t w;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
#else
    w = std::uint32_t(narrow(lo)) | std::uint32_t(narrow(hi)) << 16;
#endif
    return w;
  }
  // Sets the quiet bit (0x200) of each NaN half: a half is NaN when its magnitude is
  // above 0x7c00, that is when magnitude + 0x3ff reaches bit 15 (no carry leaves a half).
  static __device__ __forceinline__ std::uint32_t quiet_pair(std::uint32_t w) {
    const std::uint32_t t = (w & 0x7fff7fffu) + 0x03ff03ffu;
    return w | ((t >> 6) & 0x02000200u);
  }
};

template <>
struct Storage16<bfloat16> {
  static __device__ __forceinline__ float widen(std::uint16_t h) { return __uint_as_float(std::uint32_t(h) << 16); }
  static __device__ __forceinline__ float widen_lo(std::uint32_t w) { return __uint_as_float(w << 16); }
  static __device__ __forceinline__ float widen_hi(std::uint32_t w) { return __uint_as_float(w & 0xffff0000u); }
  static __device__ __forceinline__ std::uint16_t narrow(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    std::uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#else
    return float16_detail::narrow_bits<8, 7>(__float_as_uint(x));
#endif
  }
  static __device__ __forceinline__ std::uint32_t narrow_pair(float lo, float hi) {
    std::uint32_t w;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
#else
    w = std::uint32_t(narrow(lo)) | std::uint32_t(narrow(hi)) << 16;
#endif
    return w;
  }
  // Quiet bit 0x40; NaN when the magnitude is above 0x7f80 (magnitude + 0x7f reaches bit 15).
  static __device__ __forceinline__ std::uint32_t quiet_pair(std::uint32_t w) {
    const std::uint32_t t = (w & 0x7fff7fffu) + 0x007f007fu;
    return w | ((t >> 9) & 0x00400040u);
  }
};

// One op on a word of two 16-bit elements: the float op on the widened pair, rounded
// once. copy quiets NaNs and passes every other pattern through (widening then
// narrowing gives back any non-NaN half or bfloat16 exactly).
template <Op op, class T>
__device__ __forceinline__ std::uint32_t apply_pair(std::uint32_t a, [[maybe_unused]] std::uint32_t b, float s,
                                                    float t) {
  using S = Storage16<T>;
  if constexpr (op == Op::copy) {
    return S::quiet_pair(a);
  } else {
    const float lo = apply<op>(S::widen_lo(a), S::widen_lo(b), s, t);
    const float hi = apply<op>(S::widen_hi(a), S::widen_hi(b), s, t);
    return S::narrow_pair(lo, hi);
  }
}

// The same for one element (heads and tails of the vector grid).
template <Op op, class T>
__device__ __forceinline__ T apply_one(T a, [[maybe_unused]] T b, float s, float t) {
  using S = Storage16<T>;
  if constexpr (op == Op::copy) {
    return T::from_bits(static_cast<std::uint16_t>(S::quiet_pair(a.bits)));
  } else {
    return T::from_bits(S::narrow(apply<op>(S::widen(a.bits), S::widen(b.bits), s, t)));
  }
}

}  // namespace ew::detail::cuda
